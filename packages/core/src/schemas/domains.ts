import { z } from 'zod';
import { successEnvelope, timestampSchema, webUrlSchema } from './common.js';

/** The DNS name whose TXT record proves control of a custom domain. */
export const challengeName = (hostname: string): string => `_deeplink-challenge.${hostname}`;

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Whether a lower-cased name, without a trailing dot, is one a custom domain can have: at most 253
 * characters, two labels or more of 1-63 letters, digits and inner hyphens, not an IPv4 address.
 * The API holds new domains to it, and the redirector every `Host` before it looks one up.
 */
export function isDomainHostname(name: string): boolean {
  if (name.length > 253) return false;
  const labels = name.split('.');
  return labels.length >= 2 && labels.every((label) => LABEL.test(label)) && !/^[\d.]+$/.test(name);
}

/** A fully qualified hostname, lower-cased, without a trailing dot, port or IP address. */
export const hostnameSchema = z
  .string()
  .trim()
  .toLowerCase()
  .transform((name) => name.replace(/\.$/, ''))
  .refine(isDomainHostname, 'must be a hostname such as go.example.com')
  .meta({ example: 'go.example.com' });

export const createDomainBodySchema = z
  .object({
    hostname: hostnameSchema,
    notFoundUrl: webUrlSchema.optional().meta({ description: 'Where unknown codes on this domain go (a 302 instead of the 404 page)' }),
  })
  .strict();
export type CreateDomainBody = z.input<typeof createDomainBodySchema>;

export const updateDomainBodySchema = z
  .object({ notFoundUrl: webUrlSchema.nullable().meta({ description: 'null: the 404 page again' }) })
  .strict();

export const domainSchema = z
  .object({
    id: z.string(),
    hostname: z.string(),
    status: z.enum(['pending', 'active']).meta({ description: 'active once the TXT record held the token' }),
    verification: z
      .object({
        type: z.literal('TXT'),
        name: z.string().meta({ example: '_deeplink-challenge.go.example.com' }),
        value: z.string(),
      })
      .meta({ description: 'The DNS record to publish; the domain becomes active once it is found' }),
    notFoundUrl: z.string().optional(),
    verifiedAt: timestampSchema.optional(),
    createdAt: timestampSchema,
    lastCheckedAt: timestampSchema.optional().meta({
      description:
        'When DNS last answered a check of the TXT record while the domain was active (its verification, later verify calls and the scheduled re-check)',
    }),
    verificationLostAt: timestampSchema.optional().meta({
      description:
        'Since when the TXT record has lacked the token: the domain turns pending once this is DOMAIN_VERIFICATION_GRACE_HOURS old; kept after that, cleared when it is verified again',
    }),
  })
  .meta({ id: 'Domain' });
export type Domain = z.infer<typeof domainSchema>;

export const domainResponseSchema = successEnvelope(z.object({ domain: domainSchema }));
export const domainListResponseSchema = successEnvelope(z.object({ domains: z.array(domainSchema) }));
