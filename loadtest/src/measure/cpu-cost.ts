// Where a click's CPU time goes: the CPU seconds each part of the stack spent over a stretch of
// load (read from /proc, all threads of each process), divided by the clicks it recorded. Redis
// adds its own per-command times (INFO commandstats). Nothing here samples or slows the processes.
import { readdirSync, readFileSync } from 'node:fs';
import type { Sql } from '@deeplink/core/db';
import { createRedis } from '@deeplink/core/redis';

/** Clock ticks per second of /proc's CPU times: 100 on every Linux this runs on (USER_HZ). */
const TICKS_PER_SECOND = 100;

/** One part of the stack, by the processes that make it up. */
export interface CpuPart {
  name: string;
  /** The pids to charge, read again at every snapshot (PostgreSQL starts and ends backends). */
  pids: () => number[];
}

/** CPU seconds of each part, and of the whole machine, at one moment. */
interface CpuSnapshot {
  parts: Record<string, number>;
  machine: number;
  at: number;
}

/** One part's share of the clicks of a stretch. */
export interface CpuCostRow {
  name: string;
  cpuSeconds: number;
  /** CPU microseconds per recorded click. */
  microsPerClick: number;
  /** Of the machine's busy time over the stretch. */
  share: number;
}

/** The cost of the clicks of a stretch, by part and by Redis command. */
export interface CpuCost {
  clicks: number;
  seconds: number;
  rows: CpuCostRow[];
  /** Redis commands by the time Redis spent in them, per click. */
  redisCommands: { command: string; callsPerClick: number; microsPerClick: number }[];
}

/** A process's user + system CPU seconds, all threads; 0 once it has ended. */
function processSeconds(pid: number): number {
  try {
    // The fields after the command name (in parentheses, which may hold spaces): utime is the 14th field of the line, the 12th after it.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Busy CPU seconds of the whole machine (all cores, everything but idle and I/O wait). */
function machineSeconds(): number {
  const [, ...times] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = times.map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) / TICKS_PER_SECOND;
}

/** The pids whose parent is `parent`. */
function childrenOf(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === parent) children.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return children;
}

/** The PostgreSQL server `sql` talks to, postmaster and every backend and helper it started. */
export async function postgresPart(sql: Sql): Promise<CpuPart> {
  const [row] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  const backend = readFileSync(`/proc/${row!.pid}/stat`, 'utf8');
  const postmaster = Number(backend.split(') ')[1]!.split(' ')[1]);
  return { name: 'PostgreSQL', pids: () => [postmaster, ...childrenOf(postmaster)] };
}

/** The Redis server at `url`, by the pid it reports (it must run on this machine). */
export async function redisPart(url: string): Promise<CpuPart> {
  const redis = createRedis(url);
  try {
    const pid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
    return { name: 'Redis', pids: () => [pid] };
  } finally {
    redis.disconnect();
  }
}

function snapshot(parts: readonly CpuPart[]): CpuSnapshot {
  return {
    parts: Object.fromEntries(parts.map((part) => [part.name, part.pids().reduce((sum, pid) => sum + processSeconds(pid), 0)])),
    machine: machineSeconds(),
    at: performance.now(),
  };
}

/** Redis's per-command calls and microseconds so far. */
async function commandStats(url: string): Promise<Map<string, { calls: number; usec: number }>> {
  const redis = createRedis(url);
  try {
    const stats = new Map<string, { calls: number; usec: number }>();
    for (const match of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
      stats.set(match[1]!, { calls: Number(match[2]), usec: Number(match[3]) });
    }
    return stats;
  } finally {
    redis.disconnect();
  }
}

/**
 * Starts measuring; the returned function ends the stretch and divides what each part spent by
 * `clicks`. Processes that are not ours (PostgreSQL backends of other clients, say) are charged
 * too: on a quiet machine there are none worth counting, and the machine row shows the rest.
 */
export async function startCpuCost(parts: readonly CpuPart[], redisUrl: string): Promise<(clicks: number) => Promise<CpuCost>> {
  const before = snapshot(parts);
  const commandsBefore = await commandStats(redisUrl);
  return async (clicks) => {
    const after = snapshot(parts);
    const commandsAfter = await commandStats(redisUrl);
    const busy = after.machine - before.machine;
    const perClick = (seconds: number) => (clicks > 0 ? (seconds * 1e6) / clicks : 0);
    const rows = parts.map(({ name }) => {
      const cpuSeconds = after.parts[name]! - before.parts[name]!;
      return { name, cpuSeconds, microsPerClick: perClick(cpuSeconds), share: busy > 0 ? cpuSeconds / busy : 0 };
    });
    const charged = rows.reduce((sum, row) => sum + row.cpuSeconds, 0);
    const rest = Math.max(0, busy - charged);
    rows.push({
      name: 'everything else (wrk, the kernel, the bench)',
      cpuSeconds: rest,
      microsPerClick: perClick(rest),
      share: busy > 0 ? rest / busy : 0,
    });
    const redisCommands = [...commandsAfter]
      .map(([command, { calls, usec }]) => {
        const earlier = commandsBefore.get(command) ?? { calls: 0, usec: 0 };
        return { command, calls: calls - earlier.calls, usec: usec - earlier.usec };
      })
      .filter(({ calls }) => calls > 0)
      .sort((a, b) => b.usec - a.usec)
      .map(({ command, calls, usec }) => ({
        command,
        callsPerClick: clicks > 0 ? calls / clicks : 0,
        microsPerClick: clicks > 0 ? usec / clicks : 0,
      }));
    return { clicks, seconds: (after.at - before.at) / 1000, rows, redisCommands };
  };
}

/** The stack's parts: the given Node processes by name, then Redis and PostgreSQL. */
export async function cpuParts(processes: Record<string, { child: { pid?: number } }>, sql: Sql, redisUrl: string): Promise<CpuPart[]> {
  const own = Object.entries(processes).map(([name, { child }]) => ({ name, pids: () => (child.pid ? [child.pid] : []) }));
  return [...own, await redisPart(redisUrl), await postgresPart(sql)];
}
