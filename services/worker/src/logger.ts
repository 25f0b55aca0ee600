import type { Config } from '@deeplink/core';

export type LogLevel = Config['LOG_LEVEL'];
export type LogFields = Record<string, unknown>;

export interface Logger {
  error(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
}

const SEVERITY: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: 100 };

/** Errors become { name, message }: enough to act on, and no stack or SQL text in the log stream. */
const plain = (value: unknown): unknown =>
  value instanceof Error ? { name: value.name, message: value.message } : value;

/**
 * One JSON object per line on stdout. Callers log ids and counts, never secrets or client addresses.
 * `write` is swapped in tests to capture lines.
 */
export function createLogger(level: LogLevel, write: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Logger {
  const threshold = SEVERITY[level];
  const at = (name: 'error' | 'warn' | 'info' | 'debug') => (message: string, fields: LogFields = {}) => {
    if (SEVERITY[name] < threshold) return;
    const entries = Object.entries(fields).map(([key, value]) => [key, plain(value)]);
    write(JSON.stringify({ time: new Date().toISOString(), level: name, service: 'worker', msg: message, ...Object.fromEntries(entries) }));
  };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}
