import { succeedsWithin } from './timeout.js';

/** One dependency's state as /readyz reports it. */
export type CheckState = 'ok' | 'down';

/** The body of /readyz on every service (and of /healthz, without `checks`). */
export interface ReadinessReport {
  status: 'ok' | 'unavailable';
  checks: Record<string, CheckState>;
  /** Figures a service shows beside its checks (the redirector's spool); readiness does not depend on them. */
  detail?: Record<string, string | number | boolean>;
}

/** How a service turns its checks into a status, for a service whose readiness is not simply "all pass". */
export interface ReadinessPolicy {
  /** Whether the service is ready, given each check's state; by default, when every check passes. */
  ready?: (states: Record<string, CheckState>) => boolean;
  /** Figures for the report's `detail`, read when the report is made. */
  detail?: () => Record<string, string | number | boolean>;
}

const everyCheckPasses = (states: Record<string, CheckState>) => Object.values(states).every((state) => state === 'ok');

/** A readiness check: a probe that must succeed in time, or a condition read at once. */
export type Check = () => PromiseLike<unknown> | boolean;

/** How long one probe may take before its dependency counts as down. */
export const READINESS_PROBE_MS = 1_000;

/**
 * Builds the readiness check of a service from named probes (`redis: () => redis.ping()`,
 * `postgres: () => sql\`SELECT 1\``, or a condition such as `accepting: () => !closing`). All
 * run at once; the service is ready when every one passes, unless `policy.ready` says otherwise.
 */
export function readinessCheck(
  checks: Record<string, Check>,
  timeoutMs = READINESS_PROBE_MS,
  { ready = everyCheckPasses, detail }: ReadinessPolicy = {},
): () => Promise<ReadinessReport> {
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
    const checked: Record<string, CheckState> = {};
    for (const [i, name] of names.entries()) checked[name] = states[i]!;
    return { status: ready(checked) ? 'ok' : 'unavailable', checks: checked, ...(detail && { detail: detail() }) };
  };
}

/** The body of /healthz: the process answers. */
export const LIVENESS_BODY = JSON.stringify({ status: 'ok' });

/** HTTP status of a readiness report. */
export const readinessStatus = (report: ReadinessReport): 200 | 503 => (report.status === 'ok' ? 200 : 503);

/**
 * The readiness every service shares: Redis and PostgreSQL answer, plus the service's own
 * conditions; a `policy` for a service that stays ready without some of them (the redirector).
 */
export function dependencyReadiness(
  deps: { redis: { ping(): PromiseLike<unknown> }; sql: (strings: TemplateStringsArray) => PromiseLike<unknown> },
  extra: Record<string, Check> = {},
  policy: ReadinessPolicy = {},
): () => Promise<ReadinessReport> {
  return readinessCheck({ redis: () => deps.redis.ping(), postgres: () => deps.sql`SELECT 1`, ...extra }, READINESS_PROBE_MS, policy);
}
