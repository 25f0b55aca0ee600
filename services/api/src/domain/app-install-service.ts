import { createHash } from 'node:crypto';
import {
  type AppInstallBody,
  type AppInstallMatch,
  type AppInstallResult,
  findInstallToken,
  hashInstallToken,
  type InstallMatchMethod,
  networkOf,
} from '@deeplink/core';
import type { AppRecord, InstallClickRecord, InstallClicksRepository, LinksRepository } from '@deeplink/core/db';
import type { AppOpenEvents } from './app-open-events.js';
import { linkAnswers } from './app-open-service.js';
import type { CredentialFailures } from './credential-failures.js';
import { fingerprintScore, installFacts, pickFingerprintMatch } from './install-fingerprint-match.js';

/** What an install claims rows as: the SHA-256 of its app's id and its installId (install_clicks.claimed_by). */
export const installClaimant = (appId: string, installId: string): Buffer => createHash('sha256').update(`${appId}\n${installId}`).digest();

/** The caller as the failed-token budgets see it: its address (after the trusted proxies) and its limit key. */
export interface InstallCaller {
  /** The client address, for its network (the fingerprint match). */
  ip: string;
  /** The address as the rate limits key it (an IPv6 address by its /64). */
  addressKey: string;
}

const NO_MATCH: AppInstallResult = { match: null };

/**
 * Install attribution: an app's first launch hands over what it knows of how it was installed (the
 * Play install referrer, the pasteboard's URL, device facts) and learns which link brought it.
 * Tokens first, in that order; then, only when the app's owner turned it on, the probabilistic
 * match. Every way of not matching (no token, an unknown, expired, spent or foreign one, no clear
 * fingerprint) answers the same `{ match: null }`, so an answer tells nothing about other installs.
 */
export function appInstallService(deps: {
  installClicks: InstallClicksRepository;
  links: LinksRepository;
  events: AppOpenEvents;
  shortUrlBase: string;
  /** VISITOR_SALT: the key of the network hash, as the redirector's. */
  visitorSalt: string;
  /** Failed token lookups, per address and per app key: past either budget, token lookups are refused (429). */
  failedTokens: { perAddress: CredentialFailures; perKey: CredentialFailures };
  /** The clock; tests set it. */
  now?: () => number;
}) {
  const answer = linkAnswers(deps.shortUrlBase);
  const clock = deps.now ?? Date.now;

  /** The answer for a claimed row: its link as /app/open gives it, once the install is queued; null when the link opens nothing now. */
  const matched = async (
    app: AppRecord,
    installId: string,
    row: InstallClickRecord,
    matchedBy: InstallMatchMethod,
    now: number,
    confidence?: number,
  ): Promise<AppInstallMatch | null> => {
    const link = await deps.links.findById(row.linkId);
    const result = link && answer(app, link, now);
    if (!result) return null;
    await deps.events.recordInstall(app, row.linkId, installId, now);
    return { ...result, matchedBy, ...(confidence !== undefined && { confidence }) };
  };

  /** The budgets' subjects: apart from the failed credentials' own addresses. */
  const subjects = (app: AppRecord, caller: InstallCaller) => ({ address: `install:${caller.addressKey}`, key: `install-app:${app.id}` });

  /** A token from the referrer, then from the pasteboard: each claims its row or counts as a failed lookup. */
  async function byToken(app: AppRecord, body: AppInstallBody, caller: InstallCaller, claimant: Buffer, now: number) {
    const tokens = (
      [
        ['install-referrer', body.referrer],
        ['pasteboard', body.pasteboard],
      ] as const
    ).flatMap(([method, text]) => {
      const token = text && findInstallToken(text);
      return token ? [{ method, token }] : [];
    });
    if (tokens.length === 0) return null;
    const { address, key } = subjects(app, caller);
    await deps.failedTokens.perAddress.check(address);
    await deps.failedTokens.perKey.check(key);
    for (const { method, token } of tokens) {
      const row = await deps.installClicks.claimToken(hashInstallToken(token), claimant, app, new Date(now));
      if (row) return matched(app, body.installId, row, method, now);
      await Promise.all([deps.failedTokens.perAddress.record(address), deps.failedTokens.perKey.record(key)]);
    }
    return null;
  }

  /** The probabilistic match: this install's earlier match, else the one visit on its network that clearly fits. */
  async function byFingerprint(app: AppRecord, body: AppInstallBody, caller: InstallCaller, claimant: Buffer, now: number) {
    if (!app.fingerprintMatching || !body.device) return null;
    const facts = installFacts(body.device);
    const windowMs = app.fingerprintWindowMinutes * 60_000;
    const earlier = await deps.installClicks.findClaimedBy(claimant, app);
    if (earlier) {
      // Scored again for the answer (a retry carries the same facts); 0 if they now rule it out.
      return matched(app, body.installId, earlier, 'fingerprint', now, fingerprintScore(earlier, facts, now, windowMs) ?? 0);
    }
    const network = networkOf(caller.ip, deps.visitorSalt);
    if (!network) return null;
    const candidates = await deps.installClicks.fingerprintCandidates(app, network, new Date(now - windowMs), new Date(now));
    const pick = pickFingerprintMatch(candidates, facts, now, windowMs);
    if (!pick || !(await deps.installClicks.claimUnclaimed(pick.visit.tokenHash, claimant, new Date(now)))) return null;
    return matched(app, body.installId, pick.visit, 'fingerprint', now, pick.confidence);
  }

  return {
    /** The link that brought this install, counted once (APP_INSTALL, APP_FIRST_OPEN); `{ match: null }` without one. */
    async install(app: AppRecord, body: AppInstallBody, caller: InstallCaller): Promise<AppInstallResult> {
      const now = clock();
      const claimant = installClaimant(app.id, body.installId);
      const match = (await byToken(app, body, caller, claimant, now)) ?? (await byFingerprint(app, body, caller, claimant, now));
      return match ? { match } : NO_MATCH;
    },
  };
}
export type AppInstallService = ReturnType<typeof appInstallService>;
