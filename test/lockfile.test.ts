// CI and the Docker images install with `npm ci`, which refuses a lockfile that disagrees with the
// manifests. This fails first, with npm's own check, so a manifest edited without `npm install`
// never reaches CI. npm runs on a copy of the manifests and the lockfile alone (`--dry-run`
// installs nothing), so the tree the other tests use is never touched.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..');
const lockfile = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { link?: boolean; resolved?: string }>;
};
/** Every workspace folder, as the lockfile records them (`services/api`, `packages/core`…). */
const workspaces = Object.entries(lockfile.packages)
  .filter(([, entry]) => entry.link)
  .map(([, entry]) => entry.resolved as string);
const copies: string[] = [];

/** The root and workspace manifests and the lockfile, copied into a fresh folder. */
function manifestsCopy(): string {
  const folder = mkdtempSync(join(tmpdir(), 'deeplink-lockfile-'));
  copies.push(folder);
  for (const file of ['package.json', 'package-lock.json', ...workspaces.map((workspace) => `${workspace}/package.json`)]) {
    mkdirSync(dirname(join(folder, file)), { recursive: true });
    cpSync(join(root, file), join(folder, file));
  }
  return folder;
}

async function npmCiCheck(folder: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: folder });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, output: failure.stdout + failure.stderr };
  }
}

afterAll(() => {
  for (const folder of copies) rmSync(folder, { recursive: true, force: true });
});

describe('the committed lockfile', () => {
  it('names every workspace', () => {
    expect(workspaces.sort()).toEqual(
      expect.arrayContaining(['loadtest', 'packages/client', 'packages/core', 'services/api', 'services/redirector', 'services/worker']),
    );
  });

  it('agrees with every manifest, as `npm ci` checks it', async () => {
    const result = await npmCiCheck(manifestsCopy());
    expect(result.output).not.toMatch(/in sync/);
    expect(result.code).toBe(0);
  }, 60_000);

  it('is refused by `npm ci` once a manifest gains a dependency the lockfile lacks', async () => {
    const folder = manifestsCopy();
    const manifestPath = join(folder, 'services/api/package.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { dependencies: Record<string, string> };
    manifest.dependencies['is-number'] = '^7.0.0';
    writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
    const result = await npmCiCheck(folder);
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/package\.json and package-lock\.json or npm-shrinkwrap\.json are in sync/);
  }, 60_000);
});
