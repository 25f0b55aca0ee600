// Types of scripts/services.mjs for the TypeScript that imports it (tests, the bench).
export { DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL } from '../packages/core/src/default-urls.mjs';
/** Whether this process runs as root (and so may install Debian packages). */
export declare const isRoot: () => boolean;
/** Installs Debian packages with apt-get (as root), or throws with the line to run. */
export declare function aptInstall(packages: string[], why: string): void;
/** The newest installed PostgreSQL's version and its bin folder, or undefined. */
export declare function postgresBinDir(): { version: string; bin: string } | undefined;
/** Runs a command as the `postgres` user when root (PostgreSQL refuses root); returns its stdout. */
export declare function runAsPostgres(command: string, args: string[]): string;
/** Makes a command-line tool from a Debian package available, installing it as root. */
export declare function ensureTool(command: string, debianPackage?: string): void;
/** Brings up Redis and PostgreSQL for the given URLs (defaults: the environment, then the default addresses). */
export declare function ensureServices(options?: { redisUrl?: string; databaseUrl?: string }): Promise<void>;
