import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHarness, type ApiHarness } from './harness.js';

let api: ApiHarness;
beforeAll(async () => {
  api = await createApiHarness();
});
afterAll(() => api.close());

describe('POST /api/auth/register', () => {
  it('creates the account, returns the user and a token, and stores an argon2id hash', async () => {
    const response = await api.request({
      method: 'POST',
      url: '/api/auth/register',
      payload: { name: 'Ada', email: 'Ada@Example.com', password: 'analytical engine' },
    });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body.success).toBe(true);
    expect(body.data.user).toEqual({ id: expect.any(String), name: 'Ada', email: 'ada@example.com' });
    expect(body.data.token.split('.')).toHaveLength(3);
    expect(response.body).not.toContain('analytical engine');
    expect(response.body).not.toContain('argon2');

    const [row] = await api.env.sql<{ password_hash: string }[]>`SELECT password_hash FROM users WHERE id = ${body.data.user.id}`;
    expect(row!.password_hash).toMatch(/^\$argon2id\$v=19\$/);
  });

  it('refuses a duplicate email, whatever its case, with 409', async () => {
    const payload = { name: 'Twin', email: 'twin@example.com', password: 'password one' };
    expect((await api.request({ method: 'POST', url: '/api/auth/register', payload })).statusCode).toBe(201);
    const again = await api.request({ method: 'POST', url: '/api/auth/register', payload: { ...payload, email: 'TWIN@example.com' } });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({
      success: false,
      error: { code: 'INVALID_REQUEST', message: expect.any(String), details: [{ field: 'email', message: 'is already registered' }] },
    });
  });

  it('names every missing or invalid field in details', async () => {
    const response = await api.request({
      method: 'POST',
      url: '/api/auth/register',
      payload: { email: 'not-an-email', password: 'short' },
    });
    expect(response.statusCode).toBe(400);
    const { error } = response.json();
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.details.map((d: { field: string }) => d.field).sort()).toEqual(['email', 'name', 'password']);
  });

  it('answers a body that is not JSON with 400 in the envelope', async () => {
    const response = await api.request({
      method: 'POST',
      url: '/api/auth/register',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ success: false, error: { code: 'INVALID_REQUEST', details: [] } });
  });
});

describe('POST /api/auth/login', () => {
  it('returns the user and a working token for the right password', async () => {
    const user = await api.registerUser('Grace');
    const response = await api.request({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: user.email.toUpperCase(), password: user.password },
    });
    expect(response.statusCode).toBe(200);
    const { data } = response.json();
    expect(data.user).toEqual({ id: user.id, name: 'Grace', email: user.email });
    const me = await api.request({ method: 'GET', url: '/api/auth/me', token: data.token });
    expect(me.json().data.user.id).toBe(user.id);
  });

  it('refuses a wrong password and an unknown email alike with 401', async () => {
    const user = await api.registerUser();
    const wrong = await api.request({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: user.email, password: 'not the password' },
    });
    const unknown = await api.request({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: 'nobody@example.com', password: 'whatever1' },
    });
    for (const response of [wrong, unknown]) {
      expect(response.statusCode).toBe(401);
      expect(response.json().error).toMatchObject({ code: 'UNAUTHORIZED', message: 'Email or password is incorrect' });
    }
  });
});

describe('GET /api/auth/me and credentials', () => {
  it('returns the caller', async () => {
    const user = await api.registerUser('Linus');
    const response = await api.request({ method: 'GET', url: '/api/auth/me', token: user.token });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ success: true, data: { user: { id: user.id, name: 'Linus', email: user.email } } });
  });

  it.each([
    ['no Authorization header', undefined],
    ['a garbage token', 'Bearer not-a-token'],
    ['a malformed header', 'Token abc'],
    ['an unknown API key', 'Bearer dlk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ])('refuses %s with 401', async (_name, authorization) => {
    const response = await api.request({ method: 'GET', url: '/api/auth/me', headers: authorization ? { authorization } : {} });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ success: false, error: { code: 'UNAUTHORIZED', details: [] } });
  });

  it('refuses an expired token, a token signed with another secret and an unsigned token', async () => {
    const user = await api.registerUser();
    const secret = api.env.config.JWT_SECRET;
    const expired = jwt.sign({ exp: Math.floor(Date.now() / 1000) - 10 }, secret, { subject: user.id });
    const forged = jwt.sign({}, 'another-secret-another-secret-another', { subject: user.id });
    const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: user.id })).toString('base64url')}.`;
    for (const token of [expired, forged, unsigned]) {
      expect((await api.request({ method: 'GET', url: '/api/auth/me', token })).statusCode).toBe(401);
    }
  });

  it('issues tokens that expire after 24 hours', async () => {
    const user = await api.registerUser();
    const payload = jwt.decode(user.token) as { iat: number; exp: number; sub: string };
    expect(payload.exp - payload.iat).toBe(24 * 60 * 60);
    expect(payload.sub).toBe(user.id);
    expect((jwt.decode(user.token, { complete: true }) as { header: { alg: string } }).header.alg).toBe('HS256');
  });
});
