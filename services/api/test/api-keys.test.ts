import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
beforeAll(async () => {
  api = await createApiHarness();
});
afterAll(() => api.close());

async function createKey(token: string, name = 'ci') {
  const response = await api.request({ method: 'POST', url: '/api/auth/api-keys', token, payload: { name } });
  expect(response.statusCode).toBe(201);
  return response.json().data.apiKey as { id: string; name: string; key: string; createdAt: string };
}

describe('API keys', () => {
  it('creates a prefixed high-entropy key, shown once and stored only as its SHA-256', async () => {
    const user = await api.registerUser();
    const apiKey = await createKey(user.token, 'deploy bot');
    expect(apiKey).toEqual({
      id: expect.any(String),
      name: 'deploy bot',
      key: expect.stringMatching(/^dlk_[A-Za-z0-9_-]{43}$/),
      createdAt: expect.any(String),
    });
    expect(apiKey.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const rows = await api.env.sql<{ key_hash: Buffer }[]>`SELECT key_hash FROM api_keys WHERE id = ${apiKey.id}`;
    expect(rows[0]!.key_hash.equals(createHash('sha256').update(apiKey.key).digest())).toBe(true);
    const everything = JSON.stringify(await api.env.sql`SELECT * FROM api_keys`);
    expect(everything).not.toContain(apiKey.key);
  });

  it('authenticates requests as its owner', async () => {
    const user = await api.registerUser('Key Owner');
    const { key } = await createKey(user.token);
    const me = await api.request({ method: 'GET', url: '/api/auth/me', token: key });
    expect(me.statusCode).toBe(200);
    expect(me.json().data.user.id).toBe(user.id);
  });

  it('cannot create or delete API keys itself (403)', async () => {
    const user = await api.registerUser();
    const first = await createKey(user.token);
    const second = await createKey(user.token);
    const create = await api.request({ method: 'POST', url: '/api/auth/api-keys', token: first.key, payload: { name: 'x' } });
    expect(create.statusCode).toBe(403);
    expect(create.json().error.code).toBe('FORBIDDEN');
    const remove = await api.request({ method: 'DELETE', url: `/api/auth/api-keys/${second.id}`, token: first.key });
    expect(remove.statusCode).toBe(403);
    expect((await api.request({ method: 'GET', url: '/api/auth/me', token: second.key })).statusCode).toBe(200);
  });

  it('stops working the moment it is deleted', async () => {
    const user = await api.registerUser();
    const apiKey = await createKey(user.token);
    expect((await api.request({ method: 'GET', url: '/api/links', token: apiKey.key })).statusCode).toBe(200);
    const remove = await api.request({ method: 'DELETE', url: `/api/auth/api-keys/${apiKey.id}`, token: user.token });
    expect(remove.statusCode).toBe(200);
    expect(remove.json()).toEqual({ success: true, data: null });
    const after = await api.request({ method: 'GET', url: '/api/links', token: apiKey.key });
    expect(after.statusCode).toBe(401);
    expect(after.json().error.code).toBe('UNAUTHORIZED');
  });

  it("refuses to delete another user's key (403) and an unknown key (404)", async () => {
    const owner = await api.registerUser();
    const intruder = await api.registerUser();
    const apiKey = await createKey(owner.token);
    const response = await api.request({ method: 'DELETE', url: `/api/auth/api-keys/${apiKey.id}`, token: intruder.token });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('FORBIDDEN');
    expect((await api.request({ method: 'GET', url: '/api/auth/me', token: apiKey.key })).statusCode).toBe(200);

    for (const id of ['00000000-0000-0000-0000-000000000000', 'not-a-uuid']) {
      const missing = await api.request({ method: 'DELETE', url: `/api/auth/api-keys/${id}`, token: owner.token });
      expect(missing.statusCode).toBe(404);
      expect(missing.json().error.code).toBe('NOT_FOUND');
    }
  });

  it('validates the name and needs authentication', async () => {
    const user = await api.registerUser();
    const invalid = await api.request({ method: 'POST', url: '/api/auth/api-keys', token: user.token, payload: { name: '' } });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error.details).toEqual([{ field: 'name', message: 'must not be empty' }]);
    const anonymous = await api.request({ method: 'POST', url: '/api/auth/api-keys', payload: { name: 'x' } });
    expect(anonymous.statusCode).toBe(401);
  });
});
