import { z } from 'zod';
import { MAX_URL_PATTERNS, normalizeUrlPattern, urlPatternProblem } from '../routing/url-patterns.js';
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

/** One allowed URL pattern (see routing/url-patterns.ts), stored with its scheme and host lower-cased. */
const urlPatternSchema = z
  .string()
  .trim()
  .superRefine((pattern, context) => {
    const problem = urlPatternProblem(pattern);
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  })
  .transform(normalizeUrlPattern);

/** A domain's allowed URL patterns, duplicates removed; each problem is reported at its index. */
export const allowedUrlPatternsSchema = z
  .array(urlPatternSchema)
  .max(MAX_URL_PATTERNS, `must have at most ${MAX_URL_PATTERNS} patterns`)
  .transform((patterns) => [...new Set(patterns)])
  .meta({
    description:
      'Where long links (/?link=…) on this domain may send visitors: URLs with * wildcards; a long link any of whose destinations matches none is a 404. Empty: no long links',
    example: ['https://example.com/*', 'https://*.example.com/shop/*'],
  });

export const createDomainBodySchema = z
  .object({
    hostname: hostnameSchema,
    notFoundUrl: webUrlSchema.optional().meta({ description: 'Where unknown codes on this domain go (a 302 instead of the 404 page)' }),
    allowedUrlPatterns: allowedUrlPatternsSchema.optional(),
  })
  .strict();
export type CreateDomainBody = z.input<typeof createDomainBodySchema>;

/** What a PUT changes: the fields it names (null or [] clears the patterns); the others stay. */
export const updateDomainBodySchema = z
  .object({
    notFoundUrl: webUrlSchema.nullable().optional().meta({ description: 'null: the 404 page again' }),
    allowedUrlPatterns: allowedUrlPatternsSchema.nullable().optional(),
  })
  .strict();
export type UpdateDomainBody = z.output<typeof updateDomainBodySchema>;

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
    allowedUrlPatterns: z
      .array(z.string())
      .meta({ description: 'Where long links on this domain may send visitors (URLs with * wildcards); empty: no long links' }),
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
