import type { Config } from '@deeplink/core';

/** Pino options for the API. Credentials never reach the log, whatever a future log line includes. */
export const loggerOptions = (config: Pick<Config, 'LOG_LEVEL'>, stream?: NodeJS.WritableStream) => ({
  level: config.LOG_LEVEL,
  redact: {
    paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.passwordHash', '*.token', '*.key', '*.keyHash'],
    censor: '[redacted]',
  },
  ...(stream && { stream }),
});
