import { createLogger, type Logger } from '@deeplink/core/runtime';

/** A service logger (the shared format, debug level) that keeps its parsed lines for assertions. */
export function capturingLogger(service = 'test'): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { log: createLogger(service, 'debug', { write: (line: string) => void lines.push(JSON.parse(line)) }), lines };
}

/** The JSON log lines of a process's output (other lines skipped). */
export function logLines(output: readonly string[]): Record<string, unknown>[] {
  return output.flatMap((line) => {
    try {
      const parsed: unknown = JSON.parse(line);
      return parsed && typeof parsed === 'object' ? [parsed as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });
}
