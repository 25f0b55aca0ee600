// Summarises a V8 .cpuprofile (from `node --cpu-prof`, see BENCH_PROFILE): where the self time
// went, by function and by package. `tsx loadtest/src/cpu-profile.ts <file or folder> [rows]`;
// given a folder, it reads the busiest profile in it (node writes one per thread, and tsx runs
// its loader on a thread of its own).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The parts of the .cpuprofile format used here. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time of one function or package. */
export interface HotSpot {
  name: string;
  selfMs: number;
  share: number;
}

/** Where a script lives: its npm package, the repository folder, or node's internals. */
export function ownerOf(url: string): string {
  if (!url) return '(native, GC, program)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const [first = '', second = ''] = url.slice(modules + '/node_modules/'.length).split('/');
    return first.startsWith('@') ? `${first}/${second}` : first;
  }
  if (url.startsWith('node:')) return 'node (internals)';
  const path = url.replace(/^file:\/\//, '');
  const match = /\/(services\/[^/]+|packages\/[^/]+|loadtest)\//.exec(path);
  return match ? match[1]! : path;
}

/** Microseconds the profiled thread was running JavaScript or native code (not idle). */
export function busyMicros(profile: CpuProfile): number {
  const idle = new Set(profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id));
  return profile.samples.reduce((sum, id, index) => (idle.has(id) ? sum : sum + (profile.timeDeltas[index] ?? 0)), 0);
}

/** Self time by function (`by: 'function'`) or by owning package, largest first, idle time left out. */
export function hotSpots(profile: CpuProfile, by: 'function' | 'owner', limit = 15): HotSpot[] {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const totals = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, index) => {
    const frame = nodes.get(id);
    const micros = profile.timeDeltas[index] ?? 0;
    // Idle time says nothing about where the work went; shares are of the busy time.
    if (!frame || frame.functionName === '(idle)') return;
    const where = frame.url ? ` ${ownerOf(frame.url)} ${frame.url.split('/').at(-1)}:${frame.lineNumber + 1}` : '';
    const key = by === 'owner' ? ownerOf(frame.url) : `${frame.functionName || '(anonymous)'}${where}`;
    totals.set(key, (totals.get(key) ?? 0) + micros);
    all += micros;
  });
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([name, micros]) => ({ name, selfMs: micros / 1000, share: all > 0 ? micros / all : 0 }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, rows = '15'] = process.argv.slice(2);
  if (!file) {
    console.error('usage: tsx loadtest/src/cpu-profile.ts <file.cpuprofile> [rows]');
    process.exit(2);
  }
  const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const profile = statSync(file).isDirectory()
    ? readdirSync(file)
        .filter((name) => name.endsWith('.cpuprofile'))
        .map((name) => read(join(file, name)))
        .sort((a, b) => busyMicros(b) - busyMicros(a))[0]
    : read(file);
  if (!profile) throw new Error(`no .cpuprofile in ${file}`);
  console.log(`busy: ${(busyMicros(profile) / 1e6).toFixed(1)} s`);
  for (const by of ['owner', 'function'] as const) {
    console.log(`self time by ${by}:`);
    for (const spot of hotSpots(profile, by, Number(rows))) {
      console.log(`  ${(spot.share * 100).toFixed(1).padStart(5)} %  ${spot.selfMs.toFixed(0).padStart(7)} ms  ${spot.name}`);
    }
  }
}
