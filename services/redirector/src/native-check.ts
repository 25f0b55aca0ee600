import { createRequire } from 'node:module';
import uWS from 'uWebSockets.js';

const require = createRequire(import.meta.url);

/**
 * Which uWebSockets.js loaded. The package silently substitutes a slow JS imitation (its
 * dist/index) when the native addon cannot load, or when UWS_USE_FALLBACK is set.
 */
export function uwsImplementation(): 'native' | 'fallback' {
  const imitation = require('uWebSockets.js/dist/index') as { App: unknown };
  return uWS.App === imitation.App ? 'fallback' : 'native';
}
