import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import { signAccessToken, tokenVerifier } from '../src/domain/tokens.js';

const SECRET = 'token-verifier-test-secret-0123456789';

/** A clock the test moves by hand, in milliseconds. */
function manualClock(start = Date.UTC(2026, 10, 24, 12)) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe('tokenVerifier', () => {
  it('verifies each distinct token once and answers again from memory until it expires', () => {
    const clock = manualClock();
    const verifier = tokenVerifier(SECRET, { now: clock.now });
    // Signed against the test clock (signAccessToken's exp comes from the real one).
    const issued = jwt.sign({ sub: 'user-1', ver: 3, exp: Math.floor(clock.now() / 1000) + 60 }, SECRET, { algorithm: 'HS256' });

    expect(verifier.knows(issued)).toBe(false);
    expect(verifier.verify(issued)).toEqual({ userId: 'user-1', version: 3, expiresAtMs: clock.now() + 60_000 });
    expect(verifier.knows(issued)).toBe(true);

    clock.advance(59_000);
    expect(verifier.verify(issued)?.userId).toBe('user-1');
    clock.advance(1_000);
    // At exp the remembered claims no longer count, and jsonwebtoken refuses the token too.
    expect(verifier.knows(issued)).toBe(false);
    expect(verifier.verify(issued)).toBeUndefined();
  });

  it('refuses a token signed with another secret, another algorithm or without a subject, and remembers none of them', () => {
    const clock = manualClock();
    const verifier = tokenVerifier(SECRET, { now: clock.now });
    const exp = Math.floor(clock.now() / 1000) + 60;
    const forged = jwt.sign({ sub: 'user-1', exp }, 'another-secret-0123456789abcdef', { algorithm: 'HS256' });
    const otherAlgorithm = jwt.sign({ sub: 'user-1', exp }, SECRET, { algorithm: 'HS512' });
    const noSubject = jwt.sign({ exp }, SECRET, { algorithm: 'HS256' });
    for (const token of [forged, otherAlgorithm, noSubject, 'not.a.token']) {
      expect(verifier.verify(token)).toBeUndefined();
      expect(verifier.knows(token)).toBe(false);
    }
  });

  it('holds at most `max` tokens, always the newest half, forgetting older ones', () => {
    const clock = manualClock();
    const verifier = tokenVerifier(SECRET, { max: 4, now: clock.now });
    const exp = Math.floor(clock.now() / 1000) + 600;
    const tokens = 'abcdefgh'.split('').map((sub) => jwt.sign({ sub, exp }, SECRET, { algorithm: 'HS256' }));
    for (const token of tokens) verifier.verify(token);
    const known = tokens.map(verifier.knows);
    expect(known.filter(Boolean).length).toBeLessThanOrEqual(4);
    expect(known.slice(-2)).toEqual([true, true]);
    expect(known[0]).toBe(false);
    // A forgotten token is still valid: it is simply verified again.
    expect(verifier.verify(tokens[0]!)?.userId).toBe('a');
  });

  it('accepts the tokens the API signs', () => {
    const verifier = tokenVerifier(SECRET);
    const token = signAccessToken('user-2', 5, SECRET, 3600);
    expect(verifier.verify(token)).toMatchObject({ userId: 'user-2', version: 5 });
  });
});
