import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@deeplink/core';
import { hashPassword } from '@deeplink/core/passwords';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import {
  createLinkPasswords,
  type LinkPasswords,
  PASS_COOKIE_SECONDS,
  PASSWORD_ATTEMPTS_PER_MINUTE,
  PASSWORD_CHECKS_MAX,
  type ProtectedLink,
} from '../src/link-passwords.js';

// The password checks on their own, over real Redis, where the limits and the pass can be seen exactly.
describe('createLinkPasswords', () => {
  let env: TestEnvironment;
  let passwords: LinkPasswords;
  let link: ProtectedLink;
  const PASSWORD = 'correct horse';
  const NOW = Date.UTC(2026, 10, 25, 12, 0, 10);
  let visitors = 0;
  const visitor = (password: string, secure = false) => ({ address: `198.51.100.${++visitors}`, password, secure });
  const passOf = (cookie: string) => cookie.split(';')[0]!;

  beforeAll(async () => {
    env = await createTestEnvironment();
    passwords = createLinkPasswords({ config: env.config, keys: redisKeys(env.config.REDIS_PREFIX), redis: env.redis });
    link = { id: 'link-1', defaultUrl: 'https://example.com/', passwordHash: await hashPassword(PASSWORD) };
  });
  afterAll(() => env?.close());

  it('answers busy past PASSWORD_CHECKS_MAX checks at once, before counting the attempt', async () => {
    const address = visitor(PASSWORD);
    const verdicts = await Promise.all(
      Array.from({ length: PASSWORD_CHECKS_MAX + 2 }, () => passwords.check('c1', 'c1', link, address, NOW)),
    );
    expect(verdicts.map(({ kind }) => kind)).toEqual([...Array(PASSWORD_CHECKS_MAX).fill('right'), 'busy', 'busy']);
    // The busy ones spent nothing: the address still has its remaining attempts.
    for (let i = PASSWORD_CHECKS_MAX; i < PASSWORD_ATTEMPTS_PER_MINUTE; i++) {
      expect((await passwords.check('c1', 'c1', link, address, NOW)).kind).toBe('right');
    }
    expect(await passwords.check('c1', 'c1', link, address, NOW)).toEqual({ kind: 'limited', retryAfterSeconds: 50 });
  });

  it('counts attempts per address and link, in one-minute windows', async () => {
    const address = visitor('wrong');
    for (let i = 0; i < PASSWORD_ATTEMPTS_PER_MINUTE; i++)
      expect((await passwords.check('c1', 'c1', link, address, NOW)).kind).toBe('wrong');
    expect((await passwords.check('c1', 'c1', link, address, NOW)).kind).toBe('limited');
    expect((await passwords.check('c2', 'c2', { ...link, id: 'link-2' }, address, NOW)).kind).toBe('wrong');
    expect((await passwords.check('c1', 'c1', link, address, NOW + 60_000)).kind).toBe('wrong');
  });

  it('hands out a pass that opens its link only, only until it expires, and only for the same password', async () => {
    const right = await passwords.check('go.example.com/c1', 'c1', link, visitor(PASSWORD, true), NOW);
    if (right.kind !== 'right') throw new Error(`expected a right verdict, got ${right.kind}`);
    expect(right.cookie).toMatch(/^link_pass=\d+\.[A-Za-z0-9_-]{43}; Path=\/c1; Max-Age=3600; HttpOnly; SameSite=Lax; Secure$/);
    const pass = passOf(right.cookie);
    expect(passwords.admits(pass, 'go.example.com/c1', link, NOW)).toBe(true);
    expect(passwords.admits(`other=1; ${pass}; more=2`, 'go.example.com/c1', link, NOW)).toBe(true);
    expect(passwords.admits(pass, 'go.example.com/c1', link, NOW + PASS_COOKIE_SECONDS * 1000)).toBe(false);
    expect(passwords.admits(pass, 'c1', link, NOW)).toBe(false);
    expect(passwords.admits(pass, 'go.example.com/c1', { ...link, id: 'link-2' }, NOW)).toBe(false);
    expect(passwords.admits(pass, 'go.example.com/c1', { ...link, passwordHash: await hashPassword(PASSWORD) }, NOW)).toBe(false);
    for (const broken of [
      '',
      'link_pass=',
      'link_pass=abc',
      `${pass}x`,
      `${pass.slice(0, -1)}${pass.endsWith('A') ? 'B' : 'A'}`,
      'link_pass=.',
    ]) {
      expect(passwords.admits(broken, 'go.example.com/c1', link, NOW)).toBe(false);
    }
  });
});
