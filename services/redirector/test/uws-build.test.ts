// Which uWebSockets.js the redirector picks: the official build when installed and loadable, the
// bundled one otherwise, the JS imitation last. Each case installs packages into a folder of its
// own and resolves from there, as the redirector resolves from its own.
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadUws } from '../src/uws.js';

const bundled = dirname(createRequire(import.meta.url).resolve('uws-bundled/package.json'));
const binary = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
const hasBundledBinary = (() => {
  try {
    createRequire(import.meta.url)(`uws-bundled/binaries/${binary}`);
    return true;
  } catch {
    return false;
  }
})();
const folders: string[] = [];

/** A folder whose node_modules holds the bundled build and, optionally, an `uWebSockets.js`. */
function projectWith(official?: (folder: string) => void): NodeJS.Require {
  const root = mkdtempSync(join(tmpdir(), 'deeplink-uws-'));
  folders.push(root);
  // A link, as npm's workspaces make them: the imitation's own dependencies resolve from the real folder.
  mkdirSync(join(root, 'node_modules'));
  symlinkSync(bundled, join(root, 'node_modules/uws-bundled'), 'dir');
  if (official) {
    const folder = join(root, 'node_modules/uWebSockets.js');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'uWebSockets.js', version: '20.99.0', main: 'uws.js' }));
    official(folder);
  }
  return createRequire(join(root, 'index.js'));
}

afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('the uWebSockets.js build', () => {
  it.runIf(hasBundledBinary)('is the official one when it is installed and its binary loads', () => {
    // The official package's layout: uws.js requiring the binary beside it.
    const load = projectWith((folder) => {
      cpSync(join(bundled, 'binaries', binary), join(folder, binary));
      writeFileSync(
        join(folder, 'uws.js'),
        `module.exports = require('./uws_' + process.platform + '_' + process.arch + '_' + process.versions.modules + '.node');\n`,
      );
    });
    const picked = loadUws(load, {});
    expect(picked.build).toBe('official');
    expect(picked.reason).toBe('');
    expect(typeof picked.module.App).toBe('function');
  });

  it('passes over an official build that does not load, and says why', () => {
    // What the official package throws on a Node or libc it has no binary for.
    const load = projectWith((folder) => {
      writeFileSync(
        join(folder, 'uws.js'),
        `throw new Error('This version of uWS.js supports only Node.js versions 20, 22, 24 on (glibc 2.38+) Linux\\nmore detail');\n`,
      );
    });
    const picked = loadUws(load, {});
    expect(picked.build).toBe(hasBundledBinary ? 'bundled' : 'fallback');
    expect(picked.reason).toContain(
      'the official uWebSockets.js build did not load: This version of uWS.js supports only Node.js versions 20, 22, 24',
    );
    expect(picked.reason).not.toContain('more detail');
  });

  it('is the bundled one without an official build, or the imitation where its binary does not load', () => {
    const picked = loadUws(projectWith(), {});
    expect(picked.reason).toMatch(/^no official uWebSockets.js build installed/);
    if (hasBundledBinary) {
      expect(picked.build).toBe('bundled');
    } else {
      expect(picked.build).toBe('fallback');
      expect(picked.reason).toContain(`the bundled build has no loadable ${binary} (Node ${process.versions.node})`);
    }
  });

  it('is the imitation when UWS_USE_FALLBACK asks for it', () => {
    // From the redirector's own folder: the imitation needs the bundled package's dependencies.
    const picked = loadUws(createRequire(import.meta.url), { UWS_USE_FALLBACK: 'true' });
    expect(picked.build).toBe('fallback');
    expect(picked.reason).toBe('UWS_USE_FALLBACK is set');
  });
});
