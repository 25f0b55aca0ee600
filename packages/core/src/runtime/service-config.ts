import { ConfigError, loadConfig, type Config } from '../config.js';

/**
 * The configuration of a service process, or exit 1 with the message that names each bad
 * variable (written to stderr as a log line, whatever LOG_LEVEL says).
 */
export function loadConfigOrExit(service: string, env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${JSON.stringify({ level: 'fatal', time: new Date().toISOString(), service, msg: error.message })}\n`);
    process.exit(1);
  }
}
