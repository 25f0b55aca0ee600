import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from '@deeplink/core/passwords';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
let owner: { id: string; token: string };
beforeAll(async () => {
  api = await createApiHarness();
  owner = await api.registerUser('Owner');
});
afterAll(() => api.close());

const open = { title: 'Preview', defaultUrl: 'https://example.com/preview' };
const PASSWORD = 'spring preview';

async function create(body: object) {
  return api.request({ method: 'POST', url: '/api/links', token: owner.token, payload: body });
}

async function created(body: object) {
  const response = await create(body);
  expect(response.statusCode).toBe(201);
  return response.json().data.link as { id: string; url: string; passwordProtected: boolean } & Record<string, unknown>;
}

const update = (id: string, payload: object) => api.request({ method: 'PUT', url: `/api/links/${id}`, token: owner.token, payload });

/** The hash PostgreSQL holds for the link, null for none. */
async function storedHash(id: string): Promise<string | null> {
  const [row] = await api.env.sql<{ password_hash: string | null }[]>`SELECT password_hash FROM links WHERE id = ${id}`;
  return row!.password_hash;
}

/** The routing record the redirector reads. */
async function cachedRecord(url: string): Promise<Record<string, unknown>> {
  const code = url.split('/').pop();
  return JSON.parse((await api.env.redis.get(`${api.env.config.REDIS_PREFIX}link:${code}`))!);
}

describe('link passwords', () => {
  it('are stored as argon2id hashes, never answered, and said by passwordProtected', async () => {
    const link = await created({ ...open, password: PASSWORD });
    expect(link.passwordProtected).toBe(true);
    expect(JSON.stringify(link)).not.toContain(PASSWORD);
    expect(link).not.toHaveProperty('password');
    expect(link).not.toHaveProperty('passwordHash');
    const hash = await storedHash(link.id);
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyPassword(hash!, PASSWORD)).toBe(true);
    expect(await verifyPassword(hash!, 'another one')).toBe(false);

    const read = await api.request({ method: 'GET', url: `/api/links/${link.id}`, token: owner.token });
    expect(read.json().data.link).toEqual(link);
    const list = await api.request({ method: 'GET', url: '/api/links?limit=100', token: owner.token });
    expect(list.body).not.toContain('argon2');
    // The redirector recognises the link by its record's hash.
    expect((await cachedRecord(link.url)).passwordHash).toBe(hash);
  });

  it('leave open links as they were: passwordProtected false, no key in the routing record', async () => {
    const link = await created(open);
    expect(link.passwordProtected).toBe(false);
    expect(await storedHash(link.id)).toBeNull();
    expect(await cachedRecord(link.url)).toEqual({ id: link.id, defaultUrl: open.defaultUrl });
  });

  it('refuse passwords outside 6-128 characters and other types, naming the field', async () => {
    for (const [password, message] of [
      ['short', 'must be at least 6 characters'],
      ['x'.repeat(129), 'must be at most 128 characters'],
    ] as const) {
      const response = await create({ ...open, password });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({
        success: false,
        error: { code: 'INVALID_REQUEST', details: [{ field: 'password', message }] },
      });
    }
    for (const password of [123456, null, ['secret-ish']]) {
      const response = await create({ ...open, password });
      expect(response.statusCode).toBe(400);
      const { details } = response.json().error;
      expect(details.length).toBeGreaterThan(0);
      for (const detail of details) expect(detail.field).toBe('password');
    }
    const link = await created(open);
    const response = await update(link.id, { password: 'tiny' });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details).toEqual([{ field: 'password', message: 'must be at least 6 characters' }]);
    expect(await storedHash(link.id)).toBeNull();
  });

  it('are kept by updates that leave them out, replaced by a new one and removed by null', async () => {
    const link = await created({ ...open, password: PASSWORD });
    const hash = await storedHash(link.id);

    const renamed = await update(link.id, { title: 'Renamed' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json().data.link).toMatchObject({ title: 'Renamed', passwordProtected: true });
    expect(await storedHash(link.id)).toBe(hash);

    const replaced = await update(link.id, { password: 'a different one' });
    expect(replaced.json().data.link.passwordProtected).toBe(true);
    const newHash = await storedHash(link.id);
    expect(await verifyPassword(newHash!, 'a different one')).toBe(true);
    expect(await verifyPassword(newHash!, PASSWORD)).toBe(false);
    expect((await cachedRecord(link.url)).passwordHash).toBe(newHash);

    const removed = await update(link.id, { password: null });
    expect(removed.statusCode).toBe(200);
    expect(removed.json().data.link.passwordProtected).toBe(false);
    expect(await storedHash(link.id)).toBeNull();
    expect(await cachedRecord(link.url)).not.toHaveProperty('passwordHash');
  });

  it('are set per link by bulk creation', async () => {
    const response = await api.request({
      method: 'POST',
      url: '/api/links/bulk',
      token: owner.token,
      payload: { links: [{ ...open, password: PASSWORD }, open] },
    });
    expect(response.statusCode).toBe(201);
    const [protectedLink, openLink] = response.json().data.links;
    expect([protectedLink.passwordProtected, openLink.passwordProtected]).toEqual([true, false]);
    expect(await verifyPassword((await storedHash(protectedLink.id))!, PASSWORD)).toBe(true);
    expect(await storedHash(openLink.id)).toBeNull();
    expect(response.body).not.toContain(PASSWORD);
  });
});
