import { unauthorized } from '@deeplink/core';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AuthService, Principal } from '../domain/auth-service.js';
import type { CredentialFailures } from '../domain/credential-failures.js';
import { looksLikeApiKey } from '../domain/tokens.js';
import { addressSubject } from './rate-limit.js';

/** The credential a request sends, or why what it sends is not one; undefined when it sends none. */
function credentialOf(request: FastifyRequest): { credential: string } | { problem: string } | undefined {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match ? { credential: match[1]! } : { problem: 'The Authorization header must be "Bearer <API key or token>"' };
  }
  if (!request.routeOptions.config.apiKeyInQuery) return undefined;
  const { key } = request.query as { key?: unknown };
  if (typeof key !== 'string' || key === '') return undefined;
  // Login tokens never travel in a URL: proxies and browsers keep URLs in their logs and history.
  return looksLikeApiKey(key) ? { credential: key } : { problem: 'The key must be an API key of this service (dlk_…)' };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route also takes an API key in `?key=` (Firebase's REST API did); the header wins when both are sent. */
    apiKeyInQuery?: boolean;
  }
  interface FastifyRequest {
    /** Set when the request carried valid credentials. */
    principal?: Principal;
    /** Why the credentials were refused, when they were sent but were not valid. */
    authProblem?: string;
  }
}

/**
 * Reads `Authorization: Bearer <API key or login token>` on the routes that use a caller (all but
 * the health checks, register and login), or an API key in `?key=` on the routes that take one
 * there (`apiKeyInQuery`), so rate limits can be per user; it never refuses by itself:
 * requirePrincipal does that on the protected routes.
 */
export const authentication = fp<{ auth: AuthService; failures: CredentialFailures }>(
  async (app, { auth, failures }) => {
    app.decorateRequest('principal', undefined);
    app.decorateRequest('authProblem', undefined);
    app.addHook('onRequest', async (request) => {
      // Routes limited per address or not at all never look at the caller: resolving credentials there would be wasted work.
      if (request.routeOptions.config.rateLimitScope) return;
      const sent = credentialOf(request);
      if (!sent) return;
      if ('problem' in sent) {
        request.authProblem = sent.problem;
        return;
      }
      // An address that keeps sending bad credentials is stopped before its next lookup; credentials
      // proven without one (isProven) still pass, so one bad client cannot lock out its neighbours.
      if (!auth.isProven(sent.credential)) await failures.check(addressSubject(request));
      request.principal = await auth.authenticate(sent.credential);
      if (!request.principal) {
        request.authProblem = 'The API key or token is invalid, expired or revoked';
        await failures.record(addressSubject(request));
      }
    });
  },
  { name: 'authentication' },
);

/** onRequest hook for the protected subtree: 401 unless the request is authenticated. */
export async function requirePrincipal(request: FastifyRequest): Promise<void> {
  if (!request.principal)
    throw unauthorized(request.authProblem ?? 'Authentication required: send Authorization: Bearer <API key or token>');
}

/** The authenticated caller; only valid inside the protected subtree. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthorized();
  return request.principal;
}
