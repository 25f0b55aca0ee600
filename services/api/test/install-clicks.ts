import { hashInstallToken, INSTALL_TOKEN_TTL_DAYS, networkOf, newInstallToken, primaryLanguage, userAgentFacts } from '@deeplink/core';
import { installClicksRepository, type Sql } from '@deeplink/core/db';

const DAY = 86_400_000;

/** A visit to a store as the redirector sees it. */
export interface StoreVisit {
  linkId: string;
  platform: 'ANDROID' | 'IOS';
  /** The visitor's address (its network is what is stored). */
  ip: string;
  userAgent: string;
  acceptLanguage?: string;
  clickedAt: number;
  /** Overrides the platform's TTL from clickedAt (an expired row). */
  expiresAt?: number;
}

/**
 * Writes the install_clicks row the worker writes for a store visit, with the same core functions
 * (hashed token, networkOf with VISITOR_SALT, the User-Agent's facts, the platform's TTL), and
 * returns the token the visitor carried to the store.
 */
export async function storeVisit(sql: Sql, visitorSalt: string, visit: StoreVisit): Promise<string> {
  const token = newInstallToken();
  const facts = userAgentFacts(visit.userAgent);
  await installClicksRepository(sql).insert({
    tokenHash: hashInstallToken(token),
    linkId: visit.linkId,
    platform: visit.platform,
    clickedAt: new Date(visit.clickedAt),
    expiresAt: new Date(visit.expiresAt ?? visit.clickedAt + INSTALL_TOKEN_TTL_DAYS[visit.platform] * DAY),
    network: networkOf(visit.ip, visitorSalt),
    osVersion: facts.osVersion,
    deviceFamily: facts.deviceFamily,
    language: primaryLanguage(visit.acceptLanguage),
  });
  return token;
}
