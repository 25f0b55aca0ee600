import { succeedsWithin } from './timeout.js';

/** One dependency's state as /readyz reports it. */
export type CheckState = 'ok' | 'down';

/** The body of /readyz on every service (and of /healthz, without `checks`). */
export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  checks: Record<string, CheckState>;
}

/** A readiness check: a probe that must succeed in time, or a condition read at once. */
export type Check = () => PromiseLike<unknown> | boolean;

/** How long one probe may take before its dependency counts as down. */
export const READINESS_PROBE_MS = 1_000;

/**
 * Builds the readiness check of a service from named probes (`redis: () => redis.ping()`,
 * `postgres: () => sql\`SELECT 1\``, or a condition such as `accepting: () => !closing`). All
 * run at once; the service is ready when every one passes.
 */
export function readinessCheck(checks: Record<string, Check>, timeoutMs = READINESS_PROBE_MS): () => Promise<ReadinessReport> {
  const names = Object.keys(checks);
  return async () => {
    const states = await Promise.all(
      names.map(async (name): Promise<CheckState> => {
        const probe = checks[name]!;
        const result = await succeedsWithin(async () => {
          if ((await probe()) === false) throw new Error(`${name} not ready`);
        }, timeoutMs);
        return result ? 'ok' : 'down';
      }),
    );
    const report: ReadinessReport = { status: states.every((state) => state === 'ok') ? 'ok' : 'unavailable', checks: {} };
    names.forEach((name, i) => (report.checks[name] = states[i]!));
    return report;
  };
}

/** The body of /healthz: the process answers. */
export const LIVENESS_BODY = JSON.stringify({ status: 'ok' });

/** HTTP status of a readiness report. */
export const readinessStatus = (report: ReadinessReport): 200 | 503 => (report.status === 'ok' ? 200 : 503);

/** The readiness every service shares: Redis and PostgreSQL answer, plus the service's own conditions. */
export function dependencyReadiness(
  deps: { redis: { ping(): PromiseLike<unknown> }; sql: (strings: TemplateStringsArray) => PromiseLike<unknown> },
  extra: Record<string, Check> = {},
): () => Promise<ReadinessReport> {
  return readinessCheck({ redis: () => deps.redis.ping(), postgres: () => deps.sql`SELECT 1`, ...extra });
}
