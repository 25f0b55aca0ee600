import { expect } from 'vitest';
import { createApiHarness, type ApiHarness } from '../../../services/api/test/harness.js';

/** A real API (PostgreSQL, Redis) listening on a free local port, so the SDK's fetch goes over HTTP. */
export async function listeningApi(env: Record<string, string> = {}): Promise<{ api: ApiHarness; baseUrl: string }> {
  const api = await createApiHarness({ env });
  const address = await api.app.listen({ host: '127.0.0.1', port: 0 });
  return { api, baseUrl: `${address}/api` };
}

let bundle = 0;

/** A registered iOS app of the user, with its key. */
export async function createIosApp(api: ApiHarness, token: string, bundleId = `com.example.sdk${++bundle}`) {
  const response = await api.request({
    method: 'POST',
    url: '/api/apps',
    token,
    payload: { platform: 'ios', teamId: 'ABCDE12345', bundleId },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.app as { id: string; key: string };
}

/** A link of the user; returns its id, code and short URL. */
export { createLinkOf as createLink } from '../../../services/api/test/harness.js';

/** A fetch that forwards to the real one and keeps every request body it sent, to count attempts. */
export function recordingFetch(route: (url: string, attemptNo: number) => string = (url) => url) {
  const bodies: Record<string, unknown>[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    bodies.push(JSON.parse(String(init?.body)));
    return fetch(route(String(input), bodies.length), init);
  };
  return { fetch: wrapped, bodies };
}
