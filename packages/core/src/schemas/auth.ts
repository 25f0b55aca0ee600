import { z } from 'zod';
import { storableText, successEnvelope, timestampSchema } from './common.js';

export const userSchema = z.object({ id: z.string(), name: z.string(), email: z.string() }).meta({ id: 'User' });
export type User = z.infer<typeof userSchema>;

const emailSchema = z.string().trim().toLowerCase().max(254).pipe(z.email('must be a valid email address'));

export const registerBodySchema = z
  .object({
    name: storableText().trim().min(1, 'must not be empty').max(100),
    email: emailSchema,
    // New passwords only: a login compares whatever it is sent, so older passwords keep working.
    password: storableText().min(8, 'must be at least 8 characters').max(128, 'must be at most 128 characters'),
  })
  .strict();
export type RegisterBody = z.infer<typeof registerBodySchema>;

export const loginBodySchema = z
  .object({
    email: emailSchema,
    password: z.string().min(1, 'must not be empty').max(128),
  })
  .strict();
export type LoginBody = z.infer<typeof loginBodySchema>;

export const changePasswordBodySchema = z
  .object({
    currentPassword: z.string().min(1, 'must not be empty').max(128),
    newPassword: registerBodySchema.shape.password,
  })
  .strict();
export type ChangePasswordBody = z.infer<typeof changePasswordBodySchema>;

export const authResultSchema = z.object({ user: userSchema, token: z.string() });
export type AuthResult = z.infer<typeof authResultSchema>;
export const authResponseSchema = successEnvelope(authResultSchema);
export const meResponseSchema = successEnvelope(z.object({ user: userSchema }));

export const createApiKeyBodySchema = z.object({ name: storableText().trim().min(1, 'must not be empty').max(100) }).strict();
export type CreateApiKeyBody = z.infer<typeof createApiKeyBodySchema>;

export const apiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    key: z.string().meta({ description: 'The secret; returned only in this response' }),
    createdAt: timestampSchema,
  })
  .meta({ id: 'ApiKey' });
export type ApiKey = z.infer<typeof apiKeySchema>;
export const apiKeyResponseSchema = successEnvelope(z.object({ apiKey: apiKeySchema }));

/** An API key as the key list shows it: never the secret or its hash. */
export const apiKeyListItemSchema = z
  .object({
    id: z.string(),
    name: z.string().meta({ example: 'deploy bot' }),
    prefix: z.string().meta({
      description: 'The first characters of the key, to tell keys apart (only `dlk_` for keys made before prefixes were kept)',
      example: 'dlk_Q2xpY2tz',
    }),
    createdAt: timestampSchema,
    lastUsedAt: timestampSchema.nullable().meta({
      description: 'When the key last authenticated a request, to the minute (updated at most once a minute); null if never',
      example: '2026-11-22T10:15:00.000Z',
    }),
  })
  .meta({ id: 'ApiKeyListItem' });
export type ApiKeyListItem = z.infer<typeof apiKeyListItemSchema>;
export const apiKeyListResponseSchema = successEnvelope(z.object({ apiKeys: z.array(apiKeyListItemSchema) }));

/** `:id` of a link, as POST /links returned it. */
export const idParamsSchema = z.object({
  id: z
    .string()
    .max(64)
    .meta({ description: "The link's id (a UUID), as returned when it was created", example: '6f1c2f44-7d7e-4c1e-9c55-0d7f4f3c8a10' }),
});

/** `:id` of an API key, as POST /auth/api-keys returned it. */
export const apiKeyIdParamsSchema = z.object({
  id: z.string().max(64).meta({
    description: "The API key's id (a UUID, not the key itself), as GET /auth/api-keys lists it",
    example: '0b6f5a7e-2f64-4c1b-8d1e-3c2a9b7f4e21',
  }),
});
