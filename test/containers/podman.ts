// Podman on this machine: the tools installed when missing, the engine set up the way it works
// here, and one way to run its commands with their output kept for post-mortems.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { aptInstall, ensureTool, isRoot } from '../../scripts/services.mjs';

export const repoRoot = join(import.meta.dirname, '../..');
/** Cached between runs (git-ignored): the debootstrap root, the engine's config, the logs. */
export const cacheDir = join(repoRoot, '.data/containers');

/**
 * Installs podman, runc, debootstrap, podman-compose and podman's network backend when missing (as root, like the other slow
 * projects' tools) and returns the environment every podman command runs with. runc, because crun
 * refuses hybrid cgroups; no default ulimits, because the engine's defaults are refused here;
 * cgroupfs and a file event log, because there is no systemd to ask.
 */
export function ensurePodman(): NodeJS.ProcessEnv {
  // Rootless podman needs subordinate id ranges and a user session this set-up was never checked with.
  if (!isRoot()) throw new Error('the containers project runs podman as root, and this user is not root');
  ensureTool('podman');
  ensureTool('runc');
  ensureTool('debootstrap');
  ensureTool('podman-compose');
  // Only recommended by Debian's podman, so left out by an install without recommends: the bridge
  // networks (netavark) and the DNS between containers on them (aardvark-dns).
  if (!existsSync('/usr/lib/podman/netavark') || !existsSync('/usr/lib/podman/aardvark-dns')) {
    aptInstall(['netavark', 'aardvark-dns'], "podman's network backend (netavark, aardvark-dns) is not installed");
  }
  mkdirSync(join(cacheDir, 'logs'), { recursive: true });
  const conf = join(cacheDir, 'containers.conf');
  writeFileSync(
    conf,
    [
      '[containers]',
      'default_ulimits = []',
      '[engine]',
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      '[network]',
      'network_backend = "netavark"',
      '',
    ].join('\n'),
  );
  return { ...process.env, CONTAINERS_CONF: conf };
}

/** What a command printed, stdout and stderr together. */
export interface CommandResult {
  code: number | null;
  output: string;
}

/**
 * Runs a command to its end; its output also goes to `.data/containers/logs/<log>.log`. Rejects
 * with the output's tail when it fails, unless `allowFailure`.
 */
export function run(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; log: string; cwd?: string; stdin?: NodeJS.ReadableStream; allowFailure?: boolean },
): Promise<CommandResult> {
  const logFile = createWriteStream(join(cacheDir, 'logs', `${options.log}.log`), { flags: 'a' });
  logFile.write(`\n$ ${command} ${args.join(' ')}\n`);
  const child = spawn(command, args, {
    env: options.env,
    cwd: options.cwd ?? repoRoot,
    stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  if (options.stdin && child.stdin) options.stdin.pipe(child.stdin);
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    logFile.write(chunk);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      logFile.end();
      if (code === 0 || options.allowFailure) resolve({ code, output });
      else reject(new Error(`${command} ${args.slice(0, 6).join(' ')} exited with ${code}:\n${output.slice(-4000)}`));
    });
  });
}

/** `podman <args>` with the engine's environment; resolves with what it printed. */
export async function podman(env: NodeJS.ProcessEnv, args: string[], log = 'podman'): Promise<string> {
  return (await run('podman', args, { env, log })).output.trim();
}

/**
 * Removes everything a compose project left: containers, volumes and networks, found by the label
 * podman-compose puts on them. Its images (named `<project>_<service>`) move to one name per
 * service, replacing the previous run's, so that the next build finds every layer in the cache.
 */
export async function removeProject(env: NodeJS.ProcessEnv, project: string): Promise<void> {
  const label = `label=io.podman.compose.project=${project}`;
  const quiet = async (args: string[]) =>
    (await run('podman', args, { env, log: 'cleanup', allowFailure: true })).output.split('\n').filter(Boolean);
  const containers = await quiet(['ps', '-a', '-q', '--filter', label]);
  if (containers.length > 0) await quiet(['rm', '-f', '-t', '5', ...containers]);
  const volumes = await quiet(['volume', 'ls', '-q', '--filter', label]);
  if (volumes.length > 0) await quiet(['volume', 'rm', '-f', ...volumes]);
  const networks = await quiet(['network', 'ls', '-q', '--filter', label]);
  if (networks.length > 0) await quiet(['network', 'rm', '-f', ...networks]);
  for (const image of await quiet(['images', '--format', '{{.Repository}}', '--filter', `reference=*${project}_*`])) {
    const kept = `localhost/deeplink-containers-test:${image.slice(image.lastIndexOf('_') + 1)}`;
    const [previous, built] = await Promise.all([imageId(env, kept), imageId(env, image)]);
    await quiet(['tag', image, kept]);
    await quiet(['untag', built ?? image, image]);
    if (previous && previous !== built) await quiet(['rmi', previous]);
  }
}

/** The id of the image a name holds, or undefined when it holds none. */
async function imageId(env: NodeJS.ProcessEnv, name: string): Promise<string | undefined> {
  const { code, output } = await run('podman', ['image', 'inspect', '--format', '{{.Id}}', name], {
    env,
    log: 'cleanup',
    allowFailure: true,
  });
  return code === 0 ? output.trim() : undefined;
}
