import { pino, stdTimeFunctions, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/**
 * What an error becomes in a log line: enough to act on. Only these fields are copied, so an
 * error carrying a query, a request or a connection string cannot leak it into the log stream.
 */
export function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const { code } = error as { code?: unknown };
  return { type: error.name, message: error.message, ...(code !== undefined && { code }), stack: error.stack };
}

/** Query parameters that may carry a credential: their values never reach a log line. */
const SECRET_PARAMETERS = /([?&](?:token|access_token|key|api_key|apikey|password|secret)=)[^&#]*/gi;

/** A URL with credential-bearing query values replaced by `[redacted]`. */
export const redactUrl = (url: string): string => url.replace(SECRET_PARAMETERS, '$1[redacted]');

/**
 * A client address as logs keep it: its network, not the host (IPv4 /24, IPv6 /48), enough to see
 * where traffic comes from without recording who sent it.
 */
export function addressPrefix(address: string | undefined): string | undefined {
  if (!address) return undefined;
  const v4 = /^(?:::ffff:)?(\d+\.\d+\.\d+)\.\d+$/i.exec(address);
  if (v4) return `${v4[1]}.0/24`;
  if (address.includes(':')) return `${address.split(':').slice(0, 3).join(':')}::/48`;
  return undefined;
}

/** What a request becomes in a log line (Fastify logs one per request): no raw address, no credentials. */
export function serializeRequest(request: { method?: string; url?: string; ip?: string }): unknown {
  return { method: request.method, url: request.url && redactUrl(request.url), address: addressPrefix(request.ip) };
}

/** Keys whose values never reach a log line, wherever a future log call puts them. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-app-key"]',
  'req.headers.cookie',
  '*.password',
  '*.passwordHash',
  '*.token',
  '*.key',
  '*.keyHash',
];

/**
 * The log line every service writes: one JSON object per line on stdout with `level` as a name,
 * `time` (ISO 8601), `service`, `msg`, and errors under `err`. Call it pino's way:
 * `logger.warn({ batchId, err }, 'message')`.
 */
export function createLogger(service: string, level: LevelWithSilent, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service },
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: {
        err: serializeError,
        error: serializeError,
        req: serializeRequest,
        res: (response: { statusCode?: number }) => ({ statusCode: response.statusCode }),
      },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    // Written synchronously: a service exits right after its last line ("stopped"), and a buffered
    // write to a pipe could still be lost then. Lines are few (per-request conditions are rate-limited).
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

type LogLevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
/** A log call in pino's argument order. */
export type LogFn = (fields: Record<string, unknown>, msg: string) => void;

/**
 * A log call that writes at most once per interval and reports how many calls it swallowed, for
 * conditions that repeat on every request (a link without a safe destination, a full buffer).
 */
export function rateLimitedLog(logger: Pick<Logger, LogLevelName>, level: LogLevelName, intervalMs = 10_000, now = Date.now): LogFn {
  let last = -Infinity;
  let suppressed = 0;
  return (fields, msg) => {
    const at = now();
    if (at - last < intervalMs) {
      suppressed++;
      return;
    }
    logger[level](suppressed > 0 ? { ...fields, suppressed } : fields, msg);
    last = at;
    suppressed = 0;
  };
}
