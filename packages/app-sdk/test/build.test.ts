// The package as an app installs it: dist/ from `npm run build`, and the one-file bundle a React
// Native, Capacitor or web bundler makes of it. It must stay platform-neutral: no Node import,
// no require, no Buffer or process.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@deeplink/test-kit/processes';

const run = promisify(execFile);
const packageDir = join(import.meta.dirname, '..');
const distDir = join(packageDir, 'dist');
const tsc = join(packageDir, '../../node_modules/typescript/bin/tsc');
/** What only Node has: a node: import, CommonJS require, Buffer, process. */
const NODE_ONLY = /\brequire\s*\(|['"]node:|\bBuffer\b|\bprocess\./;

type Dist = typeof import('../src/index.js');
let dist: Dist;

beforeAll(async () => {
  await rm(distDir, { recursive: true, force: true });
  // The package's build script: `tsc -p tsconfig.build.json`.
  await run(process.execPath, [tsc, '-p', join(packageDir, 'tsconfig.build.json')]);
  dist = (await import(pathToFileURL(join(distDir, 'index.js')).href)) as Dist;
}, 120_000);

describe('the ESM build', () => {
  it('emits JavaScript and declarations that import only each other, with nothing Node-only', async () => {
    const files = (await readdir(distDir, { recursive: true })).map((file) => file.split('\\').join('/'));
    expect(files).toEqual(
      expect.arrayContaining(['index.js', 'index.d.ts', 'client.js', 'errors.js', 'open-id.js', 'platform.d.ts', 'types.d.ts']),
    );
    for (const file of files.filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'))) {
      const text = await readFile(join(distDir, file), 'utf8');
      const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
      for (const specifier of specifiers) expect(specifier, `${file} imports ${specifier}`).toMatch(/^\.\/[\w-]+\.js$/);
      expect(text, file).not.toMatch(NODE_ONLY);
    }
    const manifest = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8'));
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js' });
    expect(Object.keys(dist).sort()).toEqual([
      'AppSdkError',
      'InvalidAppKeyError',
      'InvalidRequestError',
      'LinkNotFoundError',
      'NetworkError',
      'RateLimitedError',
      'createDeepLinkClient',
      'newInstallId',
    ]);
  });

  it('bundles for a neutral platform into one file with no require or node: import', async () => {
    const bundle = await build({
      entryPoints: [join(distDir, 'index.js')],
      bundle: true,
      // Neither Node nor browser: what a React Native or Capacitor bundler may assume.
      platform: 'neutral',
      format: 'esm',
      write: false,
      logLevel: 'silent',
    });
    const [output] = bundle.outputFiles;
    expect(output!.text).toContain('x-app-key');
    expect(output!.text).not.toMatch(NODE_ONLY);
    expect(output!.text).not.toMatch(/^\s*import\s/m);
  });

  it("refuses Node-only APIs at compile time: the package's tsconfig has no Node types", async () => {
    // Inside the package, so @types/node is as reachable as it is for src/.
    const dir = await mkdtemp(join(packageDir, '.node-only-'));
    try {
      await writeFile(
        join(dir, 'node-only.ts'),
        `import { readFileSync } from 'node:fs';\nexport const leaks = [readFileSync, Buffer.from('x'), process.env.HOME];\n`,
      );
      await writeFile(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          extends: join(packageDir, 'tsconfig.json'),
          compilerOptions: { typeRoots: [] },
          include: [],
          files: ['node-only.ts'],
        }),
      );
      const result = await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')]).catch((error: { stdout: string }) => error);
      const output = 'stdout' in result ? result.stdout : '';
      expect(output).toContain("Cannot find module 'node:fs'");
      expect(output).toMatch(/Cannot find name 'Buffer'/);
      expect(output).toMatch(/Cannot find name 'process'/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('runs as built: a call nobody answers is its NetworkError', async () => {
    const client = dist.createDeepLinkClient({ baseUrl: `http://127.0.0.1:${await freePort()}/api`, appKey: 'dla_x', retries: 0 });
    const error = await client.open('https://example.com/abc').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(dist.NetworkError);
    expect(error).toBeInstanceOf(dist.AppSdkError);
    expect(error).toMatchObject({ name: 'NetworkError', code: 'CONNECTION_FAILED' });
  });
});
