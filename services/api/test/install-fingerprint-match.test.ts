// The probabilistic match's scoring on its own: weights, the ruling-out facts, the threshold and the
// lead over the next candidate (no I/O: the visits are what the repository returns).
import type { InstallClickRecord } from '@deeplink/core/db';
import { describe, expect, it } from 'vitest';
import {
  FINGERPRINT_MARGIN,
  FINGERPRINT_THRESHOLD,
  FINGERPRINT_WEIGHTS,
  fingerprintScore,
  installFacts,
  pickFingerprintMatch,
} from '../src/domain/install-fingerprint-match.js';

const NOW = Date.parse('2026-11-20T12:00:00Z');
const WINDOW = 120 * 60_000;
const visit = (fields: Partial<InstallClickRecord>): InstallClickRecord => ({
  tokenHash: Buffer.from(String(Math.random())),
  linkId: 'link',
  platform: 'IOS',
  clickedAt: new Date(NOW - WINDOW / 2),
  network: 'n',
  osVersion: '17.4',
  deviceFamily: 'phone',
  language: 'fr',
  ...fields,
});
const facts = installFacts({ osVersion: '17.4.1', deviceFamily: 'phone', language: 'fr-CA' });

describe('the fingerprint score', () => {
  it('reads the app facts as the visits store them', () => {
    expect(facts).toEqual({ osVersion: '17.4', deviceFamily: 'phone', language: 'fr' });
    expect(installFacts({ osVersion: '14', deviceFamily: 'tablet', language: 'en_US' })).toEqual({
      osVersion: '14',
      deviceFamily: 'tablet',
      language: 'en',
    });
  });

  it('adds the weights of what agrees, and recency down to none at the window start', () => {
    const full = FINGERPRINT_WEIGHTS.osVersion + FINGERPRINT_WEIGHTS.deviceFamily + FINGERPRINT_WEIGHTS.language;
    expect(fingerprintScore(visit({ clickedAt: new Date(NOW) }), facts, NOW, WINDOW)).toBeCloseTo(full + FINGERPRINT_WEIGHTS.recency, 3);
    expect(fingerprintScore(visit({}), facts, NOW, WINDOW)).toBeCloseTo(full + FINGERPRINT_WEIGHTS.recency / 2, 3);
    expect(fingerprintScore(visit({ clickedAt: new Date(NOW - WINDOW) }), facts, NOW, WINDOW)).toBeCloseTo(full, 3);
    expect(fingerprintScore(visit({ osVersion: '17.5' }), facts, NOW, WINDOW)).toBeCloseTo(
      full - FINGERPRINT_WEIGHTS.osVersion + FINGERPRINT_WEIGHTS.osMajor + FINGERPRINT_WEIGHTS.recency / 2,
      3,
    );
    expect(fingerprintScore(visit({ osVersion: '16.0', language: 'de' }), facts, NOW, WINDOW)).toBeCloseTo(
      FINGERPRINT_WEIGHTS.deviceFamily + FINGERPRINT_WEIGHTS.recency / 2,
      3,
    );
    // What the visit did not say scores nothing, and rules nothing out.
    expect(fingerprintScore(visit({ osVersion: null, deviceFamily: null, language: null }), facts, NOW, WINDOW)).toBeCloseTo(0.075, 3);
  });

  it('rules out a visit from the other device family', () => {
    expect(fingerprintScore(visit({ deviceFamily: 'tablet' }), facts, NOW, WINDOW)).toBeUndefined();
  });
});

describe('the fingerprint pick', () => {
  it('picks a lone visit above the threshold, and none below it', () => {
    const good = visit({});
    expect(pickFingerprintMatch([good], facts, NOW, WINDOW)).toEqual({ visit: good, confidence: 0.925 });
    // The OS disagrees: family, language and full recency together stay under the threshold.
    const weak = visit({ osVersion: '16.0', clickedAt: new Date(NOW) });
    expect(fingerprintScore(weak, facts, NOW, WINDOW)!).toBeLessThan(FINGERPRINT_THRESHOLD);
    expect(pickFingerprintMatch([weak], facts, NOW, WINDOW)).toBeUndefined();
  });

  it('answers none when the best is not far enough ahead, and the best when a fact sets it apart', () => {
    const newer = visit({ clickedAt: new Date(NOW - 60_000) });
    const older = visit({ clickedAt: new Date(NOW - WINDOW + 60_000) });
    expect(pickFingerprintMatch([older, newer], facts, NOW, WINDOW)).toBeUndefined();
    const german = visit({ language: 'de', clickedAt: new Date(NOW) });
    const french = visit({ clickedAt: new Date(NOW - WINDOW / 4) });
    expect(fingerprintScore(french, facts, NOW, WINDOW)! - fingerprintScore(german, facts, NOW, WINDOW)!).toBeGreaterThanOrEqual(
      FINGERPRINT_MARGIN,
    );
    expect(pickFingerprintMatch([german, french], facts, NOW, WINDOW)?.visit).toBe(french);
    // A tablet visit is no rival.
    expect(pickFingerprintMatch([visit({ deviceFamily: 'tablet' }), french], facts, NOW, WINDOW)?.visit).toBe(french);
    expect(pickFingerprintMatch([], facts, NOW, WINDOW)).toBeUndefined();
  });
});
