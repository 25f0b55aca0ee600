import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type * as UwsModule from 'uws-bundled';
import type { TemplatedApp, us_listen_socket } from 'uws-bundled';

/**
 * Which uWebSockets.js the redirector runs on, chosen once at start:
 *
 * 1. `official`: the upstream build, when one is installed as `uWebSockets.js` (`npm install
 *    uWebSockets.js@github:uNetworking/uWebSockets.js#<tag> -w services/redirector`) and its
 *    binary loads on this Node and libc;
 * 2. `bundled`: the build that ships with the project (`uws-bundled`, a registry republish with
 *    binaries for Node 16-20 on glibc 2.27+);
 * 3. `fallback`: that package's JavaScript imitation, slow and refused unless ALLOW_UWS_FALLBACK.
 *
 * `reason` says why an earlier choice was passed over, for the start-up log.
 */
export interface UwsBuild {
  module: typeof UwsModule;
  build: 'official' | 'bundled' | 'fallback';
  reason: string;
}

const OFFICIAL = 'uWebSockets.js';
const BUNDLED = 'uws-bundled';

/** The first line of a load error: the module loaders put whole require stacks after it. */
const firstLine = (error: unknown): string => String((error as Error).message ?? error).split('\n')[0]!;

function isMissing(error: unknown, name: string): boolean {
  const { code, message } = error as NodeJS.ErrnoException;
  return code === 'MODULE_NOT_FOUND' && message.includes(`'${name}'`);
}

/** Loads the best build `load` (a `require` resolving from the redirector's folder) can reach. */
export function loadUws(load: NodeJS.Require = createRequire(import.meta.url), env: NodeJS.ProcessEnv = process.env): UwsBuild {
  const fallback = (reason: string): UwsBuild => ({ module: load(`${BUNDLED}/dist/index`), build: 'fallback', reason });
  // uWebSockets.js's own switch for its imitation; the tests use it to run the fallback on purpose.
  if (/^(1|true)$/i.test(env.UWS_USE_FALLBACK ?? '')) return fallback('UWS_USE_FALLBACK is set');

  let reason: string;
  try {
    return { module: load(OFFICIAL), build: 'official', reason: '' };
  } catch (error) {
    reason = isMissing(error, OFFICIAL)
      ? 'no official uWebSockets.js build installed'
      : `the official uWebSockets.js build did not load: ${firstLine(error)}`;
  }
  // The bundled package's own entry would fall back to its imitation silently, printing to the
  // console; loading its binary here makes that choice visible and ours.
  const binary = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  try {
    return { module: load(`${BUNDLED}/binaries/${binary}`), build: 'bundled', reason };
  } catch (error) {
    return fallback(`${reason}; the bundled build has no loadable ${binary} (Node ${process.versions.node}): ${firstLine(error)}`);
  }
}

/** The build this process runs on. */
export const uws: UwsBuild = loadUws();

/** `native` on either real build, `fallback` on the imitation. */
export function uwsImplementation(): 'native' | 'fallback' {
  return uws.build === 'fallback' ? 'fallback' : 'native';
}

/**
 * Drops every open connection of `app`, which listens on `listenSocket`. The native App has
 * close() (not in its type definitions). The fallback's listen socket holds its Node server, whose
 * close() leaves a connection busy with a request open, to serve that request and the next one.
 */
export function connectionDropper(app: TemplatedApp, listenSocket: us_listen_socket): () => void {
  const close = (app as { close?: () => void }).close;
  if (close) return () => close.call(app);
  const server = (listenSocket as { http?: Server | null }).http;
  return () => server?.closeAllConnections();
}
