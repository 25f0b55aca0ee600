import type { AppRecord } from './apps-repository.js';
import type { Sql } from './client.js';

/** A stored store visit (see migration 011): what a claim answers and the probabilistic match compares. */
export interface InstallClickRecord {
  tokenHash: Buffer;
  linkId: string;
  platform: 'ANDROID' | 'IOS';
  clickedAt: Date;
  network: string | null;
  osVersion: string | null;
  deviceFamily: string | null;
  language: string | null;
}

/** A store visit as the worker writes it (the test suites write the same rows). */
export interface NewInstallClick {
  tokenHash: Buffer;
  linkId: string;
  platform: 'ANDROID' | 'IOS';
  clickedAt: Date;
  expiresAt: Date;
  network?: string;
  osVersion?: string;
  deviceFamily?: string;
  language?: string;
}

/** The app a claim is for: its owner, its platform, and what identifies it in a link. */
export type ClaimingApp = Pick<AppRecord, 'userId' | 'platform' | 'bundleId' | 'packageName'>;

/** The most fingerprint candidates one match compares: a busy shared network must not make it unbounded. */
export const MAX_FINGERPRINT_CANDIDATES = 50;

const PLATFORMS = { ios: 'IOS', android: 'ANDROID' } as const;

/**
 * Install clicks: store visits waiting for the install they may bring. An install claims one row
 * once (claimed_by, a hash of the app and its install id): the same install asking again gets the
 * same row, any other install nothing. SQL for install_clicks lives here and nowhere else.
 */
export function installClicksRepository(sql: Sql) {
  const columns = sql`
    ic.token_hash AS "tokenHash", ic.link_id AS "linkId", ic.platform, ic.clicked_at AS "clickedAt", ic.network,
    ic.os_version AS "osVersion", ic.device_family AS "deviceFamily", ic.language`;

  /**
   * Rows of links the app may claim: its owner's links that target it (the link's iosLink names
   * its bundle id, or its androidLink its package name), visited on its platform.
   */
  const ofApp = (app: ClaimingApp) => {
    const targets =
      app.platform === 'ios'
        ? sql`l.ios_link->>'bundleId' = ${app.bundleId ?? ''}`
        : sql`l.android_link->>'appPackageName' = ${app.packageName ?? ''}`;
    return sql`l.id = ic.link_id AND l.user_id = ${app.userId} AND ic.platform = ${PLATFORMS[app.platform]} AND ${targets}`;
  };

  return {
    async insert(click: NewInstallClick): Promise<void> {
      await sql`
        INSERT INTO install_clicks ${sql({
          token_hash: click.tokenHash,
          link_id: click.linkId,
          platform: click.platform,
          clicked_at: click.clickedAt,
          expires_at: click.expiresAt,
          network: click.network ?? null,
          os_version: click.osVersion ?? null,
          device_family: click.deviceFamily ?? null,
          language: click.language ?? null,
        })}`;
    },

    /**
     * Claims the row of `tokenHash` for `claimant` when it is unexpired, unclaimed or already this
     * claimant's, and of a link the app may claim; undefined otherwise (unknown, expired, another
     * install's, another account's, another app's: one answer for all).
     */
    async claimToken(tokenHash: Buffer, claimant: Buffer, app: ClaimingApp, now: Date): Promise<InstallClickRecord | undefined> {
      const [row] = await sql<InstallClickRecord[]>`
        UPDATE install_clicks ic SET claimed_by = ${claimant}, claimed_at = coalesce(ic.claimed_at, ${now})
        FROM links l
        WHERE ic.token_hash = ${tokenHash} AND ic.expires_at > ${now} AND (ic.claimed_by IS NULL OR ic.claimed_by = ${claimant})
          AND ${ofApp(app)}
        RETURNING ${columns}`;
      return row;
    },

    /** The row this claimant claimed before, if any, of a link the app may still claim. */
    async findClaimedBy(claimant: Buffer, app: ClaimingApp): Promise<InstallClickRecord | undefined> {
      const [row] = await sql<InstallClickRecord[]>`
        SELECT ${columns} FROM install_clicks ic, links l
        WHERE ic.claimed_by = ${claimant} AND ${ofApp(app)}
        ORDER BY ic.claimed_at, ic.token_hash LIMIT 1`;
      return row;
    },

    /**
     * Unclaimed, unexpired visits on `network` to links the app may claim, clicked in
     * [since, now], newest first, at most MAX_FINGERPRINT_CANDIDATES.
     */
    async fingerprintCandidates(app: ClaimingApp, network: string, since: Date, now: Date): Promise<InstallClickRecord[]> {
      return sql<InstallClickRecord[]>`
        SELECT ${columns} FROM install_clicks ic, links l
        WHERE ic.network = ${network} AND ic.claimed_by IS NULL AND ic.clicked_at >= ${since} AND ic.clicked_at <= ${now}
          AND ic.expires_at > ${now} AND ${ofApp(app)}
        ORDER BY ic.clicked_at DESC, ic.token_hash LIMIT ${MAX_FINGERPRINT_CANDIDATES}`;
    },

    /** Claims a still unclaimed row; false when another install took it first. */
    async claimUnclaimed(tokenHash: Buffer, claimant: Buffer, now: Date): Promise<boolean> {
      const rows = await sql`
        UPDATE install_clicks SET claimed_by = ${claimant}, claimed_at = ${now}
        WHERE token_hash = ${tokenHash} AND claimed_by IS NULL AND expires_at > ${now}
        RETURNING 1`;
      return rows.length === 1;
    },
  };
}
export type InstallClicksRepository = ReturnType<typeof installClicksRepository>;
