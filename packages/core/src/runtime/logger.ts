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

/** Keys whose values never reach a log line, wherever a future log call puts them. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
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
      serializers: { err: serializeError, error: serializeError },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination,
  );
}

type LogLevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
/** A log call in pino's argument order. */
export type LogFn = (fields: Record<string, unknown>, msg: string) => void;

/**
 * A log call that writes at most once per interval and reports how many calls it swallowed, for
 * conditions that repeat on every request (a link without a safe destination, a full buffer).
 */
export function rateLimitedLog(logger: Logger, level: LogLevelName, intervalMs = 10_000, now = Date.now): LogFn {
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
