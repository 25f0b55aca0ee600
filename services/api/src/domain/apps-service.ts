import {
  type App,
  type AppWithKey,
  conflict,
  type CreateAppInput,
  forbidden,
  notFound,
  type RedisKeys,
  type UpdateAppBody,
} from '@deeplink/core';
import { type AppRecord, type AppsRepository, AppTakenError, type LinksRepository, type StoredAppKey } from '@deeplink/core/db';
import { cacheLink, type RedisClient } from '@deeplink/core/redis';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from './auth-service.js';
import type { DomainRecords } from './domain-records.js';
import { generateAppKey, hashApiKey, SHOWN_KEY_PREFIX_LENGTH } from './tokens.js';

/** A new app key, and what of it is stored. */
const newAppKey = (): { key: string; stored: StoredAppKey } => {
  const key = generateAppKey();
  return { key, stored: { prefix: key.slice(0, SHOWN_KEY_PREFIX_LENGTH), hash: hashApiKey(key) } };
};

/**
 * An account's apps: their association files on its domains, the iOS page's name and App Store
 * fallback, and their publishable app keys (shown in full only when created).
 */
export function appsService(deps: {
  apps: AppsRepository;
  links: LinksRepository;
  records: DomainRecords;
  redis: RedisClient;
  keys: RedisKeys;
  log: FastifyBaseLogger;
}) {
  const toApp = (app: AppRecord): App => ({
    id: app.id,
    platform: app.platform,
    ...(app.name && { name: app.name }),
    ...(app.teamId && { teamId: app.teamId }),
    ...(app.bundleId && { bundleId: app.bundleId }),
    ...(app.appStoreId && { appStoreId: app.appStoreId }),
    ...(app.packageName && { packageName: app.packageName }),
    ...(app.sha256CertFingerprints && { sha256CertFingerprints: app.sha256CertFingerprints }),
    keyPrefix: app.keyPrefix,
    keyCreatedAt: app.keyCreatedAt?.toISOString() ?? null,
    fingerprintMatching: app.fingerprintMatching,
    fingerprintWindowMinutes: app.fingerprintWindowMinutes,
    createdAt: app.createdAt.toISOString(),
  });

  /** The caller's app, or the 404/403 the other routes of /apps/:id answer. */
  const ownApp = async (principal: Principal, id: string): Promise<AppRecord> => {
    const app = await deps.apps.findById(id);
    if (!app) throw notFound('App not found');
    if (app.userId !== principal.userId) throw forbidden('This app belongs to another account');
    return app;
  };

  /** What changes with an app: the owner's domains' association files, and (iOS) its links' cached records. */
  const republish = async (app: AppRecord) => {
    await deps.records.writeAll(app.userId);
    if (app.platform !== 'ios' || !app.bundleId) return;
    for (const link of await deps.links.listByIosBundle(app.userId, app.bundleId)) {
      await cacheLink(deps.redis, deps.keys, link).catch((error: unknown) =>
        deps.log.warn({ err: error, code: link.code }, 'link cache write failed; the reconcile task will repair it'),
      );
    }
  };

  return {
    /** Registers the app with a new key, returned in full this once. */
    async create(principal: Principal, body: CreateAppInput): Promise<AppWithKey> {
      const { key, stored } = newAppKey();
      let app: AppRecord;
      try {
        app = await deps.apps.create(principal.userId, body, stored);
      } catch (error) {
        if (!(error instanceof AppTakenError)) throw error;
        const field = body.platform === 'ios' ? 'bundleId' : 'packageName';
        throw conflict('You registered this app already', [{ field, message: 'is already registered' }]);
      }
      await republish(app);
      return { ...toApp(app), key };
    },

    /**
     * Gives the app a new key, returned in full this once. The old key stops working at once: every
     * open call looks its key up in PostgreSQL, so no instance holds on to it. No grace period.
     */
    async rotateKey(principal: Principal, id: string): Promise<AppWithKey> {
      await ownApp(principal, id);
      const { key, stored } = newAppKey();
      const app = await deps.apps.replaceKey(id, stored);
      if (!app) throw notFound('App not found');
      return { ...toApp(app), key };
    },

    /** Changes the app's settings (the probabilistic install match); nothing the association files show. */
    async update(principal: Principal, id: string, changes: UpdateAppBody): Promise<App> {
      await ownApp(principal, id);
      const app = await deps.apps.updateSettings(id, changes);
      if (!app) throw notFound('App not found');
      return toApp(app);
    },

    async list(principal: Principal): Promise<App[]> {
      return (await deps.apps.listByUser(principal.userId)).map(toApp);
    },

    async delete(principal: Principal, id: string): Promise<void> {
      await ownApp(principal, id);
      const deleted = await deps.apps.delete(id);
      if (deleted) await republish(deleted);
    },
  };
}
export type AppsService = ReturnType<typeof appsService>;
