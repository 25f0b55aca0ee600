import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { aptInstall, isRoot, postgresBinDir, runAsPostgres } from '../../../scripts/services.mjs';
import { freePort } from './processes.js';

/** A PostgreSQL server of a test's own, on a spare port, with its data in a temporary folder. */
export interface PrivatePostgres {
  port: number;
  dir: string;
  /** The URL of a database on this server. */
  url(database?: string): string;
  /** Stops the server: `fast` shuts down cleanly, `immediate` is a crash as far as clients can tell. */
  stop(mode?: 'fast' | 'immediate'): void;
  /** Starts it again (after stop), on the same port and data. */
  restart(): void;
  /** Stops the server if it runs and removes its data. */
  destroy(): void;
}

/** The newest installed PostgreSQL with `hll`, installing the Debian packages when missing and root. */
function binaries(): { version: string; bin: string } {
  let pg = postgresBinDir();
  if (!pg) {
    aptInstall(['postgresql', 'postgresql-contrib'], 'PostgreSQL is not installed');
    pg = postgresBinDir();
  }
  if (!pg) throw new Error('PostgreSQL was installed but its binaries are not in /usr/lib/postgresql');
  if (!existsSync(`/usr/share/postgresql/${pg.version}/extension/hll.control`)) {
    aptInstall([`postgresql-${pg.version}-hll`], `the 'hll' extension is missing for PostgreSQL ${pg.version}`);
  }
  return pg;
}

/** A new folder the postgres user owns (PostgreSQL refuses to run as root). */
function dataFolder(): string {
  const base = mkdtempSync('/var/tmp/deeplink-pg-');
  if (isRoot()) chownSync(base, Number(runAsPostgres('id', ['-u']).trim()), Number(runAsPostgres('id', ['-g']).trim()));
  return base;
}

function start(bin: string, dir: string, port: number): PrivatePostgres {
  const launch = () =>
    runAsPostgres(join(bin, 'pg_ctl'), [
      '-D',
      dir,
      '-l',
      join(dir, 'server.log'),
      '-w',
      '-t',
      '60',
      'start',
      // Durability does not matter here; replication does (wal_level replica is the default, spelled out).
      '-o',
      `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c wal_level=replica -c max_wal_senders=4 -c hot_standby=on`,
    ]);
  launch();
  let running = true;
  const server: PrivatePostgres = {
    port,
    dir,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop(mode = 'fast') {
      if (!running) return;
      runAsPostgres(join(bin, 'pg_ctl'), ['-D', dir, '-m', mode, '-w', 'stop']);
      running = false;
    },
    restart() {
      if (running) return;
      launch();
      running = true;
    },
    destroy() {
      try {
        server.stop('immediate');
      } finally {
        rmSync(join(dir, '..'), { recursive: true, force: true });
      }
    },
  };
  return server;
}

/** Initialises and starts a primary that accepts streaming replicas (trust authentication, 127.0.0.1 only). */
export async function startPrimary(): Promise<PrivatePostgres> {
  const { bin } = binaries();
  const dir = join(dataFolder(), 'data');
  runAsPostgres(join(bin, 'initdb'), ['-D', dir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale']);
  return start(bin, dir, await freePort());
}

/**
 * Starts a streaming replica of `primary`: a `pg_basebackup` of it with `-R`, which writes the
 * standby.signal file and the primary's address, so the copy starts as a hot standby.
 */
export async function startReplica(primary: PrivatePostgres): Promise<PrivatePostgres> {
  const { bin } = binaries();
  const dir = join(dataFolder(), 'data');
  runAsPostgres(join(bin, 'pg_basebackup'), [
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    dir,
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
  ]);
  return start(bin, dir, await freePort());
}
