const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity } as const;
export type LogLevel = keyof typeof LEVELS;
type LogFn = (msg: string, fields?: Record<string, unknown>) => void;
export type Logger = Record<Exclude<LogLevel, 'silent'>, LogFn>;

const serialize = (_key: string, value: unknown) =>
  value instanceof Error ? { name: value.name, message: value.message } : value;

/** One JSON object per line on stdout. Callers pass fields explicitly, so nothing secret gets in by accident. */
export function createLogger(level: LogLevel, service = 'redirector', write = (line: string) => process.stdout.write(line)): Logger {
  const threshold = LEVELS[level];
  const at =
    (name: Exclude<LogLevel, 'silent'>): LogFn =>
    (msg, fields) => {
      if (LEVELS[name] < threshold) return;
      write(`${JSON.stringify({ level: name, time: new Date().toISOString(), service, msg, ...fields }, serialize)}\n`);
    };
  return { trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), fatal: at('fatal') };
}

/**
 * A log call that writes at most once per interval and reports how many calls it swallowed,
 * for conditions that repeat on every request (Redis down, buffer full).
 */
export function rateLimitedLog(log: LogFn, intervalMs = 10_000): LogFn {
  let last = -Infinity;
  let suppressed = 0;
  return (msg, fields) => {
    const now = Date.now();
    if (now - last < intervalMs) {
      suppressed++;
      return;
    }
    log(msg, suppressed > 0 ? { ...fields, suppressed } : fields);
    last = now;
    suppressed = 0;
  };
}
