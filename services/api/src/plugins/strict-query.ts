import type { RouteOptions } from 'fastify';
import { z } from 'zod';

/**
 * onRoute hook for the /api subtree: every operation refuses query parameters it does not define
 * (400 naming each one in `details`), those without a query schema included, so a misspelt filter
 * (`?tags=spring` for `?tag=spring`) is reported instead of silently widening the answer.
 */
export function refuseUnknownQueryParameters(route: RouteOptions): void {
  const schema = (route.schema ??= {});
  const query = schema.querystring;
  if (query === undefined) schema.querystring = z.object({}).strict();
  else if (query instanceof z.ZodObject) schema.querystring = query.strict();
  else throw new Error(`${route.method} ${route.url}: a query schema must be a zod object, so unknown parameters can be refused`);
}
