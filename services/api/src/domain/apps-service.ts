import { type App, conflict, type CreateAppInput, forbidden, notFound, type RedisKeys } from '@deeplink/core';
import { type AppRecord, type AppsRepository, AppTakenError, type LinksRepository } from '@deeplink/core/db';
import { cacheLink, type RedisClient } from '@deeplink/core/redis';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from './auth-service.js';
import type { DomainRecords } from './domain-records.js';

/** An account's apps: their association files on its domains, and the iOS page's name and App Store fallback. */
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
    createdAt: app.createdAt.toISOString(),
  });

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
    async create(principal: Principal, body: CreateAppInput): Promise<App> {
      let app: AppRecord;
      try {
        app = await deps.apps.create(principal.userId, body);
      } catch (error) {
        if (!(error instanceof AppTakenError)) throw error;
        const field = body.platform === 'ios' ? 'bundleId' : 'packageName';
        throw conflict('You registered this app already', [{ field, message: 'is already registered' }]);
      }
      await republish(app);
      return toApp(app);
    },

    async list(principal: Principal): Promise<App[]> {
      return (await deps.apps.listByUser(principal.userId)).map(toApp);
    },

    async delete(principal: Principal, id: string): Promise<void> {
      const app = await deps.apps.findById(id);
      if (!app) throw notFound('App not found');
      if (app.userId !== principal.userId) throw forbidden('This app belongs to another account');
      const deleted = await deps.apps.delete(id);
      if (deleted) await republish(deleted);
    },
  };
}
export type AppsService = ReturnType<typeof appsService>;
