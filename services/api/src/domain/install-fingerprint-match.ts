import { type InstallDevice, primaryLanguage } from '@deeplink/core';
import type { InstallClickRecord } from '@deeplink/core/db';

/**
 * The probabilistic install match's scoring (off unless the app's owner turns it on). Every
 * candidate is already a visit from the same network (/24 or /64), unclaimed, within the app's
 * window: the score weighs what else the visit's browser and the installed app both say. Weights
 * sum to 1, so the score reads as a confidence.
 */
export const FINGERPRINT_WEIGHTS = {
  /** Same OS version, major and minor ("17.4" and "17.4.1"). */
  osVersion: 0.4,
  /** Same major version only ("17.4" and "17.5": an update between the visit and the launch). */
  osMajor: 0.15,
  /** Phone or tablet agree. A disagreement rules the visit out: it was another device. */
  deviceFamily: 0.2,
  /** Same primary language (the browser's Accept-Language, the device's locale). */
  language: 0.25,
  /** Newer visits weigh more: the full weight at the launch's moment, none at the window's start. */
  recency: 0.15,
} as const;

/**
 * A match needs at least this score: without an OS version that agrees at least on its major,
 * family, language and recency together stay below it.
 */
export const FINGERPRINT_THRESHOLD = 0.65;

/**
 * And this lead over the next candidate. Larger than the recency weight, so two visits that only
 * differ in when they came are too close to call: a fact must tell them apart.
 */
export const FINGERPRINT_MARGIN = 0.2;

/** The facts an installed app reports, as the visits store them. */
export interface InstallFacts {
  osVersion?: string;
  deviceFamily: 'phone' | 'tablet';
  language?: string;
}

/** "17_4_1" or "17.4.1" as "17.4"; "14" stays "14" (as userAgentFacts stores a visit's). */
const majorMinor = (version: string): string => version.replace(/_/g, '.').split('.').slice(0, 2).join('.');
const major = (version: string): string => version.split('.')[0]!;

/** The app's device facts as the visits' columns hold them. */
export const installFacts = (device: InstallDevice): InstallFacts => ({
  osVersion: majorMinor(device.osVersion),
  deviceFamily: device.deviceFamily,
  language: primaryLanguage(device.language),
});

/** The score of one visit against the app's facts (0..1), or undefined when a fact rules it out. */
export function fingerprintScore(visit: InstallClickRecord, facts: InstallFacts, now: number, windowMs: number): number | undefined {
  if (visit.deviceFamily && visit.deviceFamily !== facts.deviceFamily) return undefined;
  let score = visit.deviceFamily ? FINGERPRINT_WEIGHTS.deviceFamily : 0;
  if (visit.osVersion && facts.osVersion) {
    if (visit.osVersion === facts.osVersion) score += FINGERPRINT_WEIGHTS.osVersion;
    else if (major(visit.osVersion) === major(facts.osVersion)) score += FINGERPRINT_WEIGHTS.osMajor;
  }
  if (visit.language && visit.language === facts.language) score += FINGERPRINT_WEIGHTS.language;
  const age = Math.min(Math.max(now - visit.clickedAt.getTime(), 0), windowMs);
  score += FINGERPRINT_WEIGHTS.recency * (1 - age / windowMs);
  return Math.round(score * 1000) / 1000;
}

/**
 * The visit that clearly brought this install, with its score, or undefined: none above the
 * threshold, or the best not far enough ahead of the next (too close to call).
 */
export function pickFingerprintMatch(
  visits: InstallClickRecord[],
  facts: InstallFacts,
  now: number,
  windowMs: number,
): { visit: InstallClickRecord; confidence: number } | undefined {
  const scored = visits
    .map((visit) => ({ visit, confidence: fingerprintScore(visit, facts, now, windowMs) }))
    .filter((candidate): candidate is { visit: InstallClickRecord; confidence: number } => candidate.confidence !== undefined)
    .sort((a, b) => b.confidence - a.confidence);
  const [best, second] = scored;
  if (!best || best.confidence < FINGERPRINT_THRESHOLD) return undefined;
  // The epsilon keeps 0.95 - 0.75 (0.1999…) a lead of 0.2.
  if (second && best.confidence - second.confidence < FINGERPRINT_MARGIN - 1e-9) return undefined;
  return best;
}
