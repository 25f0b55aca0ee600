import { createHmac, timingSafeEqual } from 'node:crypto';
import { type Config, PASSWORD_PAGE_CSP, type RedisKeys, renderPasswordPage } from '@deeplink/core';
import { verifyPassword } from '@deeplink/core/passwords';
import type { CachedLink, RedisClient } from '@deeplink/core/redis';
import { type Header, type Page, page, TYPE } from './responses.js';
import { wire } from './wire.js';

/** Attempts one client address may make at one link's password per minute; then 429 until the minute ends. */
export const PASSWORD_ATTEMPTS_PER_MINUTE = 5;
/**
 * Password checks one process runs at once; more answer 503. An argon2id check takes 19 MiB and
 * tens of milliseconds of a libuv pool thread, which the click spool's disk writes share: two
 * leave the pool room for them, whatever a crowd at a protected link sends.
 */
export const PASSWORD_CHECKS_MAX = 2;
/** How long a right password lets the visitor through again without the form. */
export const PASS_COOKIE_SECONDS = 60 * 60;
/** The cookie that carries a visitor's pass, scoped to the link's path. */
export const PASS_COOKIE = 'link_pass';

const WINDOW_MS = 60_000;
const HEADER = { robots: wire('X-Robots-Tag'), retryAfter: wire('Retry-After') };
const NOINDEX = wire('noindex');
const POLICY = wire(PASSWORD_PAGE_CSP);

/** What a posted password earned. */
export type PasswordVerdict =
  | { kind: 'right'; cookie: string }
  | { kind: 'wrong' }
  | { kind: 'limited'; retryAfterSeconds: number }
  | { kind: 'busy' };

export interface LinkPasswordsDeps {
  config: Pick<Config, 'JWT_SECRET' | 'BRAND_NAME'>;
  keys: RedisKeys;
  /** Counts attempts; a failure there fails the check (503), never lets it through uncounted. */
  redis: RedisClient;
}

/** A protected link's record: its key is what tells it from an open one. */
export type ProtectedLink = CachedLink & { passwordHash: string };

/**
 * Password-protected links: the form page, checking a posted password (bounded per address and
 * link, and per process), and the pass cookie that spares the form for PASS_COOKIE_SECONDS.
 *
 * A pass is `<expiry>.<mac>`, the mac an HMAC-SHA256 of the link's cache id, id, password hash and
 * the expiry, under a key derived from JWT_SECRET: it opens that link only (a pass for another
 * link, or from before the password changed, is refused) and only until it expires.
 */
export function createLinkPasswords({ config, keys, redis }: LinkPasswordsDeps) {
  const key = createHmac('sha256', config.JWT_SECRET).update('deeplink link password pass').digest();
  let checking = 0;

  const mac = (id: string, link: ProtectedLink, expiry: number) =>
    createHmac('sha256', key).update(`${id}\n${link.id}\n${link.passwordHash}\n${expiry}`).digest('base64url');

  /** The password page with `status`, saying `message` when there is one, and its extra headers. */
  const formPage = <S extends 200 | 401 | 429 | 503>(status: S, link: CachedLink, message?: string, extra: Header[] = []): Page<S> =>
    page(
      status,
      TYPE.html,
      renderPasswordPage(config.BRAND_NAME, link.socialPreview?.title, message),
      [[HEADER.robots, NOINDEX], ...extra],
      POLICY,
    );

  /** Counts an attempt; the seconds until the window ends when there were too many. */
  async function overLimit(link: ProtectedLink, address: string, now: number): Promise<number | undefined> {
    const window = Math.floor(now / WINDOW_MS);
    const attemptsKey = keys.linkPasswordAttempts(link.id, address, window);
    const [[, attempts]] = (await redis.multi().incr(attemptsKey).pexpire(attemptsKey, WINDOW_MS).exec()) as [[Error | null, number]];
    if (attempts <= PASSWORD_ATTEMPTS_PER_MINUTE) return undefined;
    return Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
  }

  return {
    /** Whether the Cookie header holds a pass for the link `id` names that has not expired. */
    admits(cookieHeader: string, id: string, link: ProtectedLink, now: number): boolean {
      if (cookieHeader === '') return false;
      for (const part of cookieHeader.split(';')) {
        const pair = part.trim();
        if (!pair.startsWith(`${PASS_COOKIE}=`)) continue;
        const value = pair.slice(PASS_COOKIE.length + 1);
        const dot = value.indexOf('.');
        const expiry = Number(value.slice(0, dot));
        if (dot === -1 || !Number.isSafeInteger(expiry) || expiry * 1000 <= now) continue;
        const expected = Buffer.from(mac(id, link, expiry));
        const given = Buffer.from(value.slice(dot + 1));
        if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
      }
      return false;
    },

    /**
     * Checks a posted password: counted against the address's attempts at the link first, refused
     * while PASSWORD_CHECKS_MAX checks run. A right one earns the Set-Cookie value of a pass for the
     * link's path (`code`), Secure when the visit came over https.
     */
    async check(
      id: string,
      code: string,
      link: ProtectedLink,
      visitor: { address: string; password: string; secure: boolean },
      now: number,
    ): Promise<PasswordVerdict> {
      if (checking >= PASSWORD_CHECKS_MAX) return { kind: 'busy' };
      checking++;
      try {
        const retryAfterSeconds = await overLimit(link, visitor.address, now);
        if (retryAfterSeconds !== undefined) return { kind: 'limited', retryAfterSeconds };
        if (!(await verifyPassword(link.passwordHash, visitor.password))) return { kind: 'wrong' };
      } finally {
        checking--;
      }
      const expiry = Math.floor(now / 1000) + PASS_COOKIE_SECONDS;
      const cookie =
        `${PASS_COOKIE}=${expiry}.${mac(id, link, expiry)}; Path=/${code}; Max-Age=${PASS_COOKIE_SECONDS}; HttpOnly; SameSite=Lax` +
        (visitor.secure ? '; Secure' : '');
      return { kind: 'right', cookie };
    },

    /** The form, for a visit without a pass (never a click). */
    ask: (link: CachedLink) => formPage(200, link),
    /** The form again, after a wrong password. */
    wrong: (link: CachedLink) => formPage(401, link, 'That password is not right. Try again.'),
    /** The form again, after too many attempts from this address. */
    limited: (link: CachedLink, retryAfterSeconds: number) =>
      formPage(429, link, 'Too many attempts. Wait a minute, then try again.', [[HEADER.retryAfter, String(retryAfterSeconds)]]),
    /** The form again, when this process is checking as many passwords as it may. */
    busy: (link: CachedLink) =>
      formPage(503, link, 'Too many visitors are opening protected links right now. Try again in a moment.', [[HEADER.retryAfter, '1']]),
  };
}

export type LinkPasswords = ReturnType<typeof createLinkPasswords>;

/** Whether a link asks for a password: the one test an open link's visit pays. */
export const isProtected = (link: CachedLink): link is ProtectedLink => link.passwordHash !== undefined;
