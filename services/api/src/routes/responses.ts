import { errorEnvelopeSchema } from '@deeplink/core';

/** Error responses every authenticated route can give, declared once for the OpenAPI document. */
export const authenticatedErrors = {
  400: errorEnvelopeSchema.describe('Invalid request (details name each bad field)'),
  401: errorEnvelopeSchema.describe('Missing, invalid, expired or revoked credentials'),
  403: errorEnvelopeSchema.describe('The resource belongs to another account'),
  404: errorEnvelopeSchema.describe('No such resource'),
  429: errorEnvelopeSchema.describe('Rate limit exceeded; see Retry-After'),
} as const;
