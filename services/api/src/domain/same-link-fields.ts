import { editableLinkFields, type LinkFields } from '@deeplink/core';
import type { LinkRecord } from '@deeplink/core/db';

/** A value as compared: dates as ISO text, object keys sorted, absent and empty values left out. */
function canonical(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value)
    .map(([key, inner]) => [key, canonical(inner)] as const)
    .filter(([, inner]) => inner !== undefined && inner !== null && !(typeof inner === 'object' && Object.keys(inner).length === 0))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return Object.fromEntries(entries);
}

/**
 * Whether writing `fields` would leave the link as it is: what lets a second run of the same file
 * skip every row. Compared in the API's form of each field, the one a PUT merges into.
 */
export const sameLinkFields = (link: LinkRecord, fields: LinkFields): boolean =>
  JSON.stringify(canonical(editableLinkFields(link))) === JSON.stringify(canonical(fields));
