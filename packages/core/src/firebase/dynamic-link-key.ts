import { createHash } from 'node:crypto';
import { DYNAMIC_LINK_PARAMS, type DynamicLinkParams } from './dynamic-link-params.js';

/**
 * The canonical key of an FDL link's parameters (`links.dynamic_link_key`): the SHA-256, in hex, of
 * each parameter that has a value, by name in one fixed order, so the same parameters in any order
 * give the same key. Values are trimmed and blank ones left out, as a long link's query is read.
 * `variant` tells apart links that the same parameters may make more than one of (the REST shim's
 * suffix option: a SHORT link must never be handed out for an UNGUESSABLE one). A hash keeps the
 * unique index small whatever the length of the parameters.
 */
export function dynamicLinkKey(params: DynamicLinkParams, variant = ''): string {
  const entries: [string, string][] = [];
  for (const name of DYNAMIC_LINK_PARAMS) {
    const value = params[name]?.trim();
    if (value) entries.push([name, value]);
  }
  return createHash('sha256')
    .update(JSON.stringify([variant, entries]))
    .digest('hex');
}
