import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAccount, startApiWithEnvironment } from './support/api-process.js';

const run = promisify(execFile);
const packageDir = join(import.meta.dirname, '..');
const distDir = join(packageDir, 'dist');
const tsc = join(packageDir, '../../node_modules/typescript/bin/tsc');

type Dist = typeof import('../src/index.js');
let dist: Dist;
let world: Awaited<ReturnType<typeof startApiWithEnvironment>>;

beforeAll(async () => {
  await rm(distDir, { recursive: true, force: true });
  // The package's build script without its first step (regenerating src/generated, which
  // generated-types.test.ts checks is current): `tsc -p tsconfig.build.json`.
  await run(process.execPath, [tsc, '-p', join(packageDir, 'tsconfig.build.json')]);
  dist = (await import(pathToFileURL(join(distDir, 'index.js')).href)) as Dist;
  world = await startApiWithEnvironment();
}, 120_000);
afterAll(() => world?.close());

describe('the ESM build', () => {
  it('emits JavaScript and declarations with no runtime dependency and no Node-only import', async () => {
    const files = (await readdir(distDir, { recursive: true })).map((file) => file.split('\\').join('/'));
    expect(files).toEqual(
      expect.arrayContaining(['index.js', 'index.d.ts', 'client.js', 'errors.js', 'http.js', 'types.d.ts', 'generated/wire-types.d.ts']),
    );
    for (const file of files.filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'))) {
      const text = await readFile(join(distDir, file), 'utf8');
      const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
      for (const specifier of specifiers) expect(specifier, `${file} imports ${specifier}`).toMatch(/^\.\/(?:[\w-]+\/)*[\w-]+\.js$/);
      expect(text).not.toMatch(/\bBuffer\b|\bprocess\./);
    }
    const manifest = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8'));
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js' });
    expect(Object.keys(dist).sort()).toEqual([
      'ConflictError',
      'NotFoundError',
      'RateLimitError',
      'ServiceAuthError',
      'ServiceError',
      'ServiceForbiddenError',
      'ServiceNetworkError',
      'ServiceValidationError',
      'createClient',
    ]);
  });

  it('declarations type-check on their own, for a browser project without Node types', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'client-consumer-'));
    try {
      const entry = join(distDir, 'index.js').replaceAll('\\', '/');
      await writeFile(
        join(dir, 'consumer.ts'),
        `
        import { createClient, ServiceValidationError, type Link, type LinkSummary } from '${entry}';
        const client = createClient({ baseUrl: 'https://links.example.com/api', apiKey: 'k' });
        export async function demo(): Promise<string> {
          const link: Link = await client.links.create({ title: 't', defaultUrl: 'https://example.com', expirationDate: new Date() });
          for await (const item of client.links.iterate({ limit: 50 })) { const summary: LinkSummary = item; void summary; }
          const csv: string = await client.analytics.export(link.id);
          try { await client.links.update(link.id, { desktopUrl: null }); } catch (e) { if (e instanceof ServiceValidationError) return e.details[0]?.field ?? ''; }
          return csv;
        }
      `,
      );
      await writeFile(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            lib: ['ES2022', 'DOM'],
            types: [],
            strict: true,
            noEmit: true,
            skipLibCheck: false,
          },
          files: ['consumer.ts'],
        }),
      );
      const result = await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')]).catch((error: { stdout: string }) => error);
      expect('stdout' in result ? result.stdout : '').toBe('');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('throws its own error classes: instanceof and name hold for real failures', async () => {
    const { createClient, ServiceError, ServiceAuthError, ServiceValidationError, ServiceNetworkError } = dist;
    const client = createClient({ baseUrl: world.api.baseUrl });

    const auth = await client.auth.login({ email: 'nobody@example.com', password: 'wrong password' }).catch((e: unknown) => e);
    expect(auth).toBeInstanceOf(ServiceAuthError);
    expect(auth).toBeInstanceOf(ServiceError);
    expect(auth).toBeInstanceOf(Error);
    expect((auth as Error).name).toBe('ServiceAuthError');

    await client.auth.register(newAccount());
    const validation = await client.links.create({ title: 'x', defaultUrl: 'not a url' }).catch((e: unknown) => e);
    expect(validation).toBeInstanceOf(ServiceValidationError);
    expect(validation).toBeInstanceOf(ServiceError);
    expect(validation).toMatchObject({ name: 'ServiceValidationError', details: [{ field: 'defaultUrl' }] });

    const missing = await client.links.get('no-such-link').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ServiceError);
    expect(missing).not.toBeInstanceOf(ServiceAuthError);
    expect(missing).toMatchObject({ name: 'NotFoundError', status: 404 });

    const offline = createClient({ baseUrl: 'http://127.0.0.1:1/api', retries: 0 });
    const network = await offline.auth.me().catch((e: unknown) => e);
    expect(network).toBeInstanceOf(ServiceNetworkError);
    expect(network).toBeInstanceOf(ServiceError);
    expect((network as Error).name).toBe('ServiceNetworkError');
  });
});
