import { unauthorized } from '@deeplink/core';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AuthService, Principal } from '../domain/auth-service.js';
import type { CredentialFailures } from '../domain/credential-failures.js';
import { addressSubject } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request carried valid credentials. */
    principal?: Principal;
    /** Why the credentials were refused, when they were sent but were not valid. */
    authProblem?: string;
  }
}

/**
 * Reads `Authorization: Bearer <API key or login token>` on the routes that use a caller (all but
 * the health checks, register and login), so rate limits can be per user; it never refuses by
 * itself: requirePrincipal does that on the protected routes.
 */
export const authentication = fp<{ auth: AuthService; failures: CredentialFailures }>(
  async (app, { auth, failures }) => {
    app.decorateRequest('principal', undefined);
    app.decorateRequest('authProblem', undefined);
    app.addHook('onRequest', async (request) => {
      const header = request.headers.authorization;
      // Routes limited per address or not at all never look at the caller: resolving credentials there would be wasted work.
      if (!header || request.routeOptions.config.rateLimitScope) return;
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match) {
        request.authProblem = 'The Authorization header must be "Bearer <API key or token>"';
        return;
      }
      // An address that keeps sending bad credentials is stopped before its next lookup; credentials
      // proven without one (isProven) still pass, so one bad client cannot lock out its neighbours.
      if (!auth.isProven(match[1]!)) await failures.check(addressSubject(request));
      request.principal = await auth.authenticate(match[1]!);
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
