import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHarness, type ApiHarness } from './harness.js';
import { csv, TAKEOUT_HEADER, takeoutFile, takeoutRow } from './import-files.js';

let api: ApiHarness;
beforeAll(async () => {
  api = await createApiHarness();
});
afterAll(() => api.close());

type Options = { format: string; domain?: string; dryRun?: boolean; mapping?: Record<string, string> };

const createImport = async (token: string, options: Options) => {
  const response = await api.request({ method: 'POST', url: '/api/imports', token, payload: options });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.import as { id: string; status: string };
};
const sendFile = (token: string, id: string, body: string | PassThrough) =>
  api.request({ method: 'PUT', url: `/api/imports/${id}/file`, token, headers: { 'content-type': 'text/csv' }, payload: body });
/** Creates an import and sends its file; answers the finished import. */
const importFile = async (token: string, options: Options, file: string) => {
  const { id } = await createImport(token, options);
  const response = await sendFile(token, id, file);
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.import;
};
const reportOf = async (token: string, id: string, query = '') =>
  (await api.request({ method: 'GET', url: `/api/imports/${id}/rows?${query || 'limit=500'}`, token })).json().data;
const countLinks = async (userId: string) =>
  (await api.env.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM links WHERE user_id = ${userId}`)[0]!.n;
const cached = (code: string) => api.env.redis.get(`${api.env.config.REDIS_PREFIX}link:${code}`);
const linkAt = async (token: string, code: string) => {
  const { links } = (await api.request({ method: 'GET', url: `/api/links?q=${code}&limit=100`, token })).json().data;
  const summary = links.find((link: { url: string }) => link.url.endsWith(`/${code}`));
  return summary && (await api.request({ method: 'GET', url: `/api/links/${summary.id}`, token })).json().data.link;
};

describe('Takeout import', () => {
  it('smoke', async () => {
    const user = await api.registerUser();
    const done = await importFile(user.token, { format: 'takeout' }, takeoutFile(20));
    console.log(done);
    console.log(JSON.stringify(await reportOf(user.token, done.id, 'limit=3'), null, 1).slice(0, 2000));
    console.log(await linkAt(user.token, 'fdl10'));
    const again = await importFile(user.token, { format: 'takeout' }, takeoutFile(20));
    console.log(again);
  });
});
