// Regression tests of the hardening: each finding of the launch review, which fails without its fix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, redisKeys } from '@deeplink/core';
import { apiKeysRepository, usersRepository } from '@deeplink/core/db';
import { csvField } from '../src/domain/csv.js';
import { authService } from '../src/domain/auth-service.js';
import { accountCache } from '../src/domain/accounts.js';
import { credentialFailures } from '../src/domain/credential-failures.js';
import { createApiHarness, harnessWithLink, type ApiHarness } from './harness.js';

const nonAscii = (n: number) => 'é'.repeat(n);

describe('byte limits', () => {
  let api: ApiHarness;
  let token: string;
  beforeAll(async () => {
    api = await createApiHarness();
    ({ token } = await api.registerUser());
  });
  afterAll(() => api.close());
  const create = (payload: object) => api.request({ method: 'POST', url: '/api/links', token, payload });
  const fields = (response: { json(): any }) => (response.json().error.details as { field: string }[]).map((d) => d.field);

  it('refuses 50 non-ASCII custom parameters whose query string would be hundreds of kilobytes', async () => {
    const customParameters = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${nonAscii(90)}${i}`, nonAscii(500)]));
    const response = await create({ title: 'Big', defaultUrl: 'https://example.com/', customParameters });
    expect(response.statusCode).toBe(400);
    expect(fields(response)).toContain('customParameters');
  });

  it('refuses a URL that is short in characters but long once percent-encoded', async () => {
    const response = await create({ title: 'Big', defaultUrl: `https://example.com/${nonAscii(1000)}` });
    expect(response.statusCode).toBe(400);
    expect(fields(response)).toEqual(['defaultUrl']);
  });

  it('refuses a destination that the merged parameters push past MAX_DESTINATION_BYTES, naming the field, on create and update', async () => {
    const longPath = `https://example.com/${'a'.repeat(1900)}`;
    const params = { utm_campaign: 'x'.repeat(200) };
    const refused = await create({ title: 'Merged', defaultUrl: longPath, customParameters: params });
    expect(refused.statusCode).toBe(400);
    expect(fields(refused)).toEqual(['defaultUrl']);

    const link = (await create({ title: 'Merged', defaultUrl: longPath })).json().data.link;
    const update = await api.request({ method: 'PUT', url: `/api/links/${link.id}`, token, payload: { customParameters: params } });
    expect(update.statusCode).toBe(400);
    expect(fields(update)).toEqual(['defaultUrl']);
  });

  it('bounds every stored string: a title of 201 characters (at most 4 bytes each) is refused', async () => {
    expect((await create({ title: '😀'.repeat(200), defaultUrl: 'https://example.com/' })).statusCode).toBe(201);
    const response = await create({ title: '😀'.repeat(201), defaultUrl: 'https://example.com/' });
    expect(response.statusCode).toBe(400);
    expect(fields(response)).toEqual(['title']);
  });
});

describe('validation of dates and URLs', () => {
  let api: ApiHarness;
  let token: string;
  let linkId: string;
  beforeAll(async () => {
    ({ api, token, linkId } = await harnessWithLink());
  });
  afterAll(() => api.close());

  it('answers 400, not 500, for the year 0000 anywhere a date is read', async () => {
    const responses = await Promise.all([
      api.request({
        method: 'POST',
        url: '/api/links',
        token,
        payload: { title: 'Y', defaultUrl: 'https://example.com/', expirationDate: '0000-01-01' },
      }),
      api.request({ method: 'PUT', url: `/api/links/${linkId}`, token, payload: { expirationDate: '0000-06-01T00:00:00Z' } }),
      api.request({ method: 'GET', url: `/api/analytics/links/${linkId}?startDate=0000-01-01`, token }),
      api.request({ method: 'GET', url: `/api/analytics/links/${linkId}/export?endDate=0000-12-31`, token }),
    ]);
    for (const response of responses) {
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toMatchObject({ success: false, error: { code: 'INVALID_REQUEST' } });
    }
  });

  it('refuses URLs holding CR, LF or tab instead of storing a link that can never redirect', async () => {
    for (const defaultUrl of ['https://example.com/a\r\nb', 'https://example.com/\ttab', 'https://exa\nmple.com/']) {
      const response = await api.request({ method: 'POST', url: '/api/links', token, payload: { title: 'C', defaultUrl } });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details).toEqual([{ field: 'defaultUrl', message: expect.stringMatching(/control characters/) }]);
    }
  });
});

describe('CSV exports', () => {
  it('escape cells a spreadsheet would run as a formula (OWASP), and leave numbers alone', () => {
    expect(csvField('=hyperlink("http://evil","x")')).toBe(`"'=hyperlink(""http://evil"",""x"")"`);
    for (const cell of ['=1+2', '+1+1', '-2+3', '@SUM(A1)', '\tx', '\rx'])
      expect(csvField(cell).replace(/^"/, '').startsWith("'")).toBe(true);
    expect(csvField('example.com')).toBe('example.com');
    expect(csvField(-3)).toBe('-3');
  });
});

describe('client addresses behind a proxy', () => {
  it('counts the rightmost address a trusted proxy added, whatever the client wrote before it', async () => {
    const api = await createApiHarness({ env: { TRUST_PROXY: '1', RATE_LIMIT_AUTH_MAX: '3' } });
    try {
      const login = (spoofed: string) =>
        api.request({
          method: 'POST',
          url: '/api/auth/login',
          headers: { 'x-forwarded-for': `${spoofed}, 198.51.100.7` },
          payload: { email: 'no@example.com', password: 'wrong password' },
        });
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await login(`203.0.113.${i}`)).statusCode);
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    } finally {
      await api.close();
    }
  });
});

describe('credentials', () => {
  it('stops an address after RATE_LIMIT_AUTH_MAX failed credentials, before looking the next one up', async () => {
    const api = await createApiHarness({ env: { RATE_LIMIT_AUTH_MAX: '5' } });
    try {
      const statuses = [];
      for (let i = 0; i < 8; i++)
        statuses.push((await api.request({ method: 'GET', url: '/api/auth/me', token: `dlk_made-up-key-${i}` })).statusCode);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    } finally {
      await api.close();
    }
  });

  it('reads credentials only where a caller matters: health checks and login neither refuse nor count a bad one', async () => {
    const api = await createApiHarness({ env: { RATE_LIMIT_AUTH_MAX: '3' } });
    try {
      const { token, email, password } = await api.registerUser();
      for (let i = 0; i < 5; i++)
        expect((await api.request({ method: 'GET', url: '/healthz', token: `dlk_made-up-key-${i}` })).statusCode).toBe(200);
      // Login has its own per-address limit (the same RATE_LIMIT_AUTH_MAX): stay under it.
      for (let i = 0; i < 2; i++) {
        expect(
          (await api.request({ method: 'POST', url: '/api/auth/login', token: 'not-a-token', payload: { email, password } })).statusCode,
        ).toBe(200);
      }
      expect((await api.request({ method: 'GET', url: '/api/auth/me', token })).statusCode).toBe(200);

      // Past the limit the address is stopped before any lookup; a token this process has already
      // verified needs none and keeps working.
      for (let i = 0; i < 3; i++) await api.request({ method: 'GET', url: '/api/auth/me', token: `dlk_made-up-key-${i}` });
      expect((await api.request({ method: 'GET', url: '/api/auth/me', token: 'dlk_one-more-guess' })).statusCode).toBe(429);
      expect((await api.request({ method: 'GET', url: '/api/auth/me', token })).statusCode).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('lets credentials that verify through an address past its failed-credential budget, while made-up ones stay stopped', async () => {
    const api = await createApiHarness({ env: { RATE_LIMIT_AUTH_MAX: '3' } });
    const sibling = await api.sibling();
    try {
      const { token, email, password } = await api.registerUser();
      const me = (credential: string) => api.request({ method: 'GET', url: '/api/auth/me', token: credential });
      const key = (await api.request({ method: 'POST', url: '/api/auth/api-keys', token, payload: { name: 'ci' } })).json().data.apiKey
        .key as string;

      // One client behind the shared address guesses keys until the address is over its budget.
      const guesses = [];
      for (let i = 0; i < 4; i++) guesses.push((await me(`dlk_made-up-key-${i}`)).statusCode);
      expect(guesses).toEqual([401, 401, 401, 429]);
      const [header, payload] = token.split('.');
      expect((await me(`${header}.${payload}.forged-signature`)).statusCode).toBe(429);

      // Its neighbours: a login token this process never saw (issued by another instance), and a key.
      const fresh = (await sibling.request({ method: 'POST', url: '/api/auth/login', payload: { email, password } })).json().data
        .token as string;
      expect((await me(fresh)).statusCode).toBe(200);
      expect((await me(key)).statusCode).toBe(200);
      expect((await me(token)).statusCode).toBe(200);
      // Guessing stays bounded: the next made-up key is still refused before any lookup.
      expect((await me('dlk_one-more-guess')).statusCode).toBe(429);
    } finally {
      await sibling.close();
      await api.close();
    }
  });

  it('counts wrong current passwords of POST /auth/password as failed credentials, of the address and of the account', async () => {
    const api = await createApiHarness({ env: { RATE_LIMIT_AUTH_MAX: '3', TRUST_PROXY: '1' } });
    try {
      const { token, password } = await api.registerUser();
      const change = (currentPassword: string, from: string) =>
        api.request({
          method: 'POST',
          url: '/api/auth/password',
          token,
          headers: { 'x-forwarded-for': from },
          payload: { currentPassword, newPassword: 'a brand new password' },
        });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await change(`wrong guess ${i}`, '198.51.100.1')).statusCode);
      expect(statuses).toEqual([400, 400, 400, 429]);
      // The right password no longer answers differently: the oracle is closed, from this address…
      const refused = await change(password, '198.51.100.1');
      expect(refused.statusCode).toBe(429);
      expect(refused.json().error.code).toBe('RATE_LIMITED');
      // …and from any other, since the account's own budget is spent too.
      expect((await change(password, '203.0.113.9')).statusCode).toBe(429);
      // The session itself keeps working.
      expect(
        (await api.request({ method: 'GET', url: '/api/auth/me', token, headers: { 'x-forwarded-for': '198.51.100.1' } })).statusCode,
      ).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('asks the database once for an unknown API key, however often it is sent', async () => {
    const api = await createApiHarness();
    const subscriber = api.env.redis.duplicate();
    try {
      const users = usersRepository(api.env.sql);
      const keys = apiKeysRepository(api.env.sql);
      let lookups = 0;
      const counted = {
        ...keys,
        findByHash: (hash: Buffer) => {
          lookups++;
          return keys.findByHash(hash);
        },
      };
      const auth = authService({
        users,
        apiKeys: counted,
        accounts: accountCache({ users, redis: api.env.redis, subscriber, keys: redisKeys(api.env.config.REDIS_PREFIX), log: console }),
        jwtSecret: api.env.config.JWT_SECRET,
        jwtTtlSeconds: 60,
        failures: credentialFailures(api.env.redis, redisKeys(api.env.config.REDIS_PREFIX), { max: 100, windowSeconds: 60 }),
      });
      for (let i = 0; i < 20; i++) expect(await auth.authenticate('dlk_the-same-wrong-key')).toBeUndefined();
      expect(lookups).toBe(1);
    } finally {
      subscriber.disconnect();
      await api.close();
    }
  });

  it('ends every earlier login token on "log out everywhere" and on a password change', async () => {
    const api = await createApiHarness();
    try {
      const { token, email, password } = await api.registerUser();
      const me = (t: string) => api.request({ method: 'GET', url: '/api/auth/me', token: t });
      const second = (await api.request({ method: 'POST', url: '/api/auth/login', payload: { email, password } })).json().data.token;
      expect((await me(second)).statusCode).toBe(200);
      expect((await api.request({ method: 'POST', url: '/api/auth/logout-all', token: second })).statusCode).toBe(200);
      expect((await me(second)).statusCode).toBe(401);
      expect((await me(token)).statusCode).toBe(401);

      const third = (await api.request({ method: 'POST', url: '/api/auth/login', payload: { email, password } })).json().data.token;
      const wrong = await api.request({
        method: 'POST',
        url: '/api/auth/password',
        token: third,
        payload: { currentPassword: 'not it', newPassword: 'a new password' },
      });
      expect(wrong.statusCode).toBe(400);
      const changed = await api.request({
        method: 'POST',
        url: '/api/auth/password',
        token: third,
        payload: { currentPassword: password, newPassword: 'a new password' },
      });
      expect(changed.statusCode).toBe(200);
      expect((await me(third)).statusCode).toBe(401);
      expect((await me(changed.json().data.token)).statusCode).toBe(200);
      expect((await api.request({ method: 'POST', url: '/api/auth/login', payload: { email, password } })).statusCode).toBe(401);
    } finally {
      await api.close();
    }
  });
});

describe('production configuration', () => {
  it('refuses the published development secrets, not only missing ones', () => {
    const dev = loadConfig({});
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: dev.JWT_SECRET, VISITOR_SALT: 'a-real-salt-0123456789' })).toThrow(
      /JWT_SECRET: a value published/,
    );
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40), VISITOR_SALT: dev.VISITOR_SALT })).toThrow(
      /VISITOR_SALT/,
    );
    expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40), VISITOR_SALT: 'a-real-salt-0123456789' }).NODE_ENV).toBe(
      'production',
    );
  });
});

describe('request logs', () => {
  it('hold no raw client address and no credential from the query string', async () => {
    const api = await createApiHarness({ captureLogs: true, env: { TRUST_PROXY: '1' } });
    try {
      await api.request({
        method: 'GET',
        url: '/api/links?token=super-secret-token&key=k-123&page=1',
        headers: { 'x-forwarded-for': '203.0.113.77' },
      });
      const logs = api.logs.join('\n');
      expect(logs).toContain('203.0.113.0/24');
      expect(logs).not.toContain('203.0.113.77');
      expect(logs).not.toContain('super-secret-token');
      expect(logs).not.toContain('k-123');
      expect(logs).toContain('token=[redacted]');
    } finally {
      await api.close();
    }
  });
});
