import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aptInstall } from '../../../scripts/services.mjs';
import { waitUntil } from './processes.js';

/** A Redis Cluster of a test's own: redis-server processes on spare 127.0.0.1 ports. */
export interface PrivateRedisCluster {
  ports: number[];
  /** REDIS_CLUSTER_NODES for the services. */
  nodes: string;
  /** Runs redis-cli against one node; returns its output. */
  cli(port: number, ...args: string[]): string;
  /** The port of the primary serving `key`'s slot now. */
  primaryOf(key: string): number;
  /** Kills one node's process (SIGKILL: a crash, no goodbye to the cluster). */
  kill(port: number): Promise<void>;
  /** Resolves once every live node reports cluster_state:ok (after a failover: the replica took over). */
  waitHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const hasCommand = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/** `count` ports that are free, each with its cluster bus port (port + 10000) free too. */
async function clusterPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if (ports.includes(port) || !(await canListen(port)) || !(await canListen(port + 10_000))) continue;
    ports.push(port);
  }
  return ports;
}

/**
 * Starts `primaries` primaries with one replica each (`redis-cli --cluster create
 * --cluster-replicas 1`). cluster-node-timeout is short so a killed primary's replica takes over
 * within about two seconds.
 */
export async function startRedisCluster(primaries = 3): Promise<PrivateRedisCluster> {
  if (!hasCommand('redis-server') || !hasCommand('redis-cli')) aptInstall(['redis-server'], 'redis-server is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'deeplink-cluster-'));
  const ports = await clusterPorts(primaries * 2);
  const processes = new Map<number, ChildProcess>();
  for (const port of ports) {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '1000',
        '--save',
        '',
        '--appendonly',
        'no',
        '--logfile',
        join(dir, `redis-${port}.log`),
        // Replicas sync at once instead of after the default 5 s wait for more replicas.
        '--repl-diskless-sync-delay',
        '0',
      ],
      { stdio: 'ignore' },
    );
    processes.set(port, child);
  }
  const cli = (port: number, ...args: string[]) => {
    const result = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { encoding: 'utf8' });
    return `${result.stdout}${result.stderr}`;
  };
  const live = () => ports.filter((port) => processes.get(port)!.exitCode === null && processes.get(port)!.signalCode === null);
  await waitUntil(() => ports.every((port) => cli(port, 'PING').trim() === 'PONG'), 20_000, { failure: 'redis-server did not answer' });
  const created = spawnSync(
    'redis-cli',
    ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '1', '--cluster-yes'],
    {
      encoding: 'utf8',
    },
  );
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${created.stdout}${created.stderr}`);

  const cluster: PrivateRedisCluster = {
    ports,
    nodes: ports.map((port) => `127.0.0.1:${port}`).join(','),
    cli,
    primaryOf(key) {
      const slot = Number(cli(live()[0]!, 'CLUSTER', 'KEYSLOT', key).trim());
      // CLUSTER NODES: id, ip:port@bus, flags, primary, ping, pong, epoch, link state, then slot ranges.
      for (const line of cli(live()[0]!, 'CLUSTER', 'NODES').trim().split('\n')) {
        const [, address, flags, , , , , , ...slots] = line.split(' ');
        if (!flags!.split(',').includes('master') || flags!.includes('fail')) continue;
        const serves = slots.some((range) => {
          const [first, last = first] = range.split('-').map(Number);
          return slot >= first! && slot <= last!;
        });
        if (serves) return Number(address!.split('@')[0]!.split(':')[1]);
      }
      throw new Error(`no live primary serves slot ${slot}`);
    },
    async kill(port) {
      const child = processes.get(port)!;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
    async waitHealthy(timeoutMs = 30_000) {
      await waitUntil(() => live().every((port) => /cluster_state:ok/.test(cli(port, 'CLUSTER', 'INFO'))), timeoutMs, {
        failure: 'the cluster was not healthy',
      });
    },
    async stop() {
      await Promise.all([...processes.keys()].filter((port) => live().includes(port)).map((port) => cluster.kill(port)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await cluster.waitHealthy();
  // A replica that has not finished its first sync cannot take over from its primary.
  await waitUntil(
    () =>
      ports.every((port) => {
        const info = cli(port, 'INFO', 'replication');
        return /role:master/.test(info) || /master_link_status:up/.test(info);
      }),
    30_000,
    { failure: 'the replicas did not sync with their primaries' },
  );
  return cluster;
}
