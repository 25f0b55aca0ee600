import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { setPageHeaders } from './page-headers.js';

/** The OpenAPI document, generated from the route schemas: JSON at /api/docs/json, a browsable page at /api/docs. */
export const openApi = fp<{ serverUrl: string }>(async (app, { serverUrl }) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Deep-link service API',
        version: '1.0.0',
        description:
          'Short links that route each visitor to the right app or page, with click analytics. ' +
          'Every response uses the envelope { success, data } or { success: false, error: { code, message, details } }.',
      },
      servers: [{ url: serverUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An API key (dlk_…) or the token from register/login' },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  // The docs page runs on the dashboard's origin: it gets the dashboard's strict headers (its
  // scripts and styles are files of its own, so the same CSP fits), and cannot be framed.
  await app.register(async (docs) => {
    docs.addHook('onSend', setPageHeaders);
    await docs.register(swaggerUi, { routePrefix: '/api/docs' });
  });
}, { name: 'openapi' });
