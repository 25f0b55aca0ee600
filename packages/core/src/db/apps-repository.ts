import type { AssociatedApp } from '../apps/association.js';
import type { CreateAppInput } from '../schemas/apps.js';
import type { Sql } from './client.js';
import { isUniqueViolation } from './errors.js';
import { isUuid } from './uuid.js';

export interface AppRecord {
  id: string;
  userId: string;
  platform: 'ios' | 'android';
  name: string | null;
  teamId: string | null;
  bundleId: string | null;
  appStoreId: string | null;
  packageName: string | null;
  sha256CertFingerprints: string[] | null;
  /** The app key's first characters, shown in app lists; null while the app has no key. */
  keyPrefix: string | null;
  keyCreatedAt: Date | null;
  /** When the app's key last called the App SDK routes (moved at most once a minute), and which call; null before any. */
  keyLastUsedAt: Date | null;
  keyLastCall: AppSdkCall | null;
  /** Whether a first launch without an install token may be matched by device facts (off by default). */
  fingerprintMatching: boolean;
  /** How long after a store visit its install may still be matched by fingerprint. */
  fingerprintWindowMinutes: number;
  createdAt: Date;
}

/** An App SDK route an app key calls: POST /api/app/open or /api/app/install. */
export type AppSdkCall = 'open' | 'install';

/** The last App SDK call of one of a link owner's apps, for the debug page. */
export interface AppKeyUse {
  platform: 'ios' | 'android';
  /** The bundle id or the package name. */
  app: string;
  call: AppSdkCall | null;
  at: Date | null;
}

/** The app's settings that may change after it is registered. */
export interface AppSettings {
  fingerprintMatching?: boolean;
  fingerprintWindowMinutes?: number;
}

/** An app key as stored: the SHA-256 of the secret, and its first characters for recognition. */
export interface StoredAppKey {
  prefix: string;
  hash: Buffer;
}

/** Thrown by create when the account already registered this bundle id or package name. */
export class AppTakenError extends Error {
  override name = 'AppTakenError';
}

const columns = (sql: Sql) => sql`
  id, user_id AS "userId", platform, name, team_id AS "teamId", bundle_id AS "bundleId", app_store_id AS "appStoreId",
  package_name AS "packageName", sha256_cert_fingerprints AS "sha256CertFingerprints", key_prefix AS "keyPrefix",
  key_created_at AS "keyCreatedAt", key_last_used_at AS "keyLastUsedAt", key_last_call AS "keyLastCall", fingerprint_matching AS "fingerprintMatching",
  fingerprint_window_minutes AS "fingerprintWindowMinutes", created_at AS "createdAt"`;

/** The settings as columns, only those given (undefined leaves a column as it is, or at its default). */
const settingColumns = (settings: AppSettings) => ({
  ...(settings.fingerprintMatching !== undefined && { fingerprint_matching: settings.fingerprintMatching }),
  ...(settings.fingerprintWindowMinutes !== undefined && { fingerprint_window_minutes: settings.fingerprintWindowMinutes }),
});

/** An app as the association files name it. */
export const toAssociatedApp = (app: AppRecord): AssociatedApp =>
  app.platform === 'ios'
    ? { platform: 'ios', teamId: app.teamId!, bundleId: app.bundleId! }
    : { platform: 'android', packageName: app.packageName!, sha256CertFingerprints: app.sha256CertFingerprints! };

/** The apps accounts register. SQL for apps lives here and nowhere else. */
export function appsRepository(sql: Sql) {
  return {
    /** Inserts an app with its key; throws AppTakenError when the account has it already. */
    async create(userId: string, app: CreateAppInput, key: StoredAppKey): Promise<AppRecord> {
      const keyValues = { key_prefix: key.prefix, key_hash: key.hash, key_created_at: new Date(), ...settingColumns(app) };
      const values =
        app.platform === 'ios'
          ? {
              ...keyValues,
              user_id: userId,
              platform: 'ios',
              name: app.name ?? null,
              team_id: app.teamId,
              bundle_id: app.bundleId,
              app_store_id: app.appStoreId ?? null,
            }
          : {
              ...keyValues,
              user_id: userId,
              platform: 'android',
              name: app.name ?? null,
              package_name: app.packageName,
              sha256_cert_fingerprints: app.sha256CertFingerprints,
            };
      try {
        const [row] = await sql<AppRecord[]>`INSERT INTO apps ${sql(values)} RETURNING ${columns(sql)}`;
        return row!;
      } catch (error) {
        if (isUniqueViolation(error, 'apps_user_bundle_key') || isUniqueViolation(error, 'apps_user_package_key'))
          throw new AppTakenError();
        throw error;
      }
    },

    async findById(id: string): Promise<AppRecord | undefined> {
      if (!isUuid(id)) return undefined;
      const [row] = await sql<AppRecord[]>`SELECT ${columns(sql)} FROM apps WHERE id = ${id}`;
      return row;
    },

    /** The app whose key hashes to keyHash, if any (a replaced key is gone at once). */
    async findByKeyHash(keyHash: Buffer): Promise<AppRecord | undefined> {
      const [row] = await sql<AppRecord[]>`SELECT ${columns(sql)} FROM apps WHERE key_hash = ${keyHash}`;
      return row;
    },

    /**
     * Records a call of the app's key, unless one was recorded less than `resolutionSeconds` ago:
     * the condition keeps concurrent calls from writing the row each.
     */
    async touchKey(id: string, call: AppSdkCall, resolutionSeconds: number): Promise<void> {
      await sql`
        UPDATE apps SET key_last_used_at = now(), key_last_call = ${call}
        WHERE id = ${id} AND (key_last_used_at IS NULL OR key_last_used_at <= now() - make_interval(secs => ${resolutionSeconds}))`;
    },

    /**
     * The last App SDK call of the apps a link opens (its iOS bundle id, its Android package), among
     * its owner's apps: never another account's app of the same name.
     */
    async keyUsesForLink(linkId: string, bundleId: string | null, packageName: string | null): Promise<AppKeyUse[]> {
      if (!isUuid(linkId)) return [];
      return sql<AppKeyUse[]>`
        SELECT a.platform, coalesce(a.bundle_id, a.package_name) AS app, a.key_last_call AS call, a.key_last_used_at AS at
        FROM apps a JOIN links l ON l.user_id = a.user_id
        WHERE l.id = ${linkId}
          AND ((a.platform = 'ios' AND a.bundle_id = ${bundleId}) OR (a.platform = 'android' AND a.package_name = ${packageName}))
        ORDER BY a.platform DESC`;
    },

    /** Gives the app a new key in place of its old one (if any); undefined when the app is gone. */
    async replaceKey(id: string, key: StoredAppKey): Promise<AppRecord | undefined> {
      const [row] = await sql<AppRecord[]>`
        UPDATE apps SET key_prefix = ${key.prefix}, key_hash = ${key.hash}, key_created_at = now()
        WHERE id = ${id} RETURNING ${columns(sql)}`;
      return row;
    },

    /** Changes the app's settings; undefined when the app is gone. */
    async updateSettings(id: string, settings: AppSettings): Promise<AppRecord | undefined> {
      const changes = settingColumns(settings);
      if (Object.keys(changes).length === 0) return this.findById(id);
      const [row] = await sql<AppRecord[]>`UPDATE apps SET ${sql(changes)} WHERE id = ${id} RETURNING ${columns(sql)}`;
      return row;
    },

    /** A user's apps, oldest first (the order of their association file entries). */
    async listByUser(userId: string): Promise<AppRecord[]> {
      return sql<AppRecord[]>`SELECT ${columns(sql)} FROM apps WHERE user_id = ${userId} ORDER BY created_at, id`;
    },

    async delete(id: string): Promise<AppRecord | undefined> {
      const [row] = await sql<AppRecord[]>`DELETE FROM apps WHERE id = ${id} RETURNING ${columns(sql)}`;
      return row;
    },
  };
}
export type AppsRepository = ReturnType<typeof appsRepository>;
