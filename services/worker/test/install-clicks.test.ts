import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppEvent,
  type AppEventPlatform,
  type ClickBatch,
  type ClickEvent,
  hashInstallToken,
  networkOf,
  newInstallToken,
  redirectEventId,
} from '@deeplink/core';
import { linksRepository, type RollupBatch, type RollupInstallClick, RollupRows, rollupsRepository } from '@deeplink/core/db';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { createWorker, type ClickWorker } from '../src/app.js';
import { createInstallClickOf } from '../src/install-clicks.js';
import { pruneInstallClicks } from '../src/maintenance.js';
import { createRollupWriter } from '../src/rollup-writer.js';
import { UA, capturingLogger, click, clickProducer, createLinks, rolledUpClicks, waitForIdle, type ClickProducer } from './helpers.js';

const DAY = 86_400_000;
const at = Date.UTC(2026, 4, 10, 8, 15);

interface Visit {
  click: ClickEvent;
  /** The platform whose store the visit was sent to, with a new token; none for a plain click. */
  store?: AppEventPlatform;
  language?: string;
}

/** A batch as the redirector queues it: each store visit's REDIRECT comes with its click, and its token. */
function storeBatch(batchId: string, visits: Visit[]): { batch: ClickBatch; tokens: string[] } {
  const tokens: string[] = [];
  const appEvents: AppEvent[] = [];
  visits.forEach(({ click: visit, store, language }, i) => {
    if (!store) return;
    const token = newInstallToken();
    tokens.push(token);
    appEvents.push({
      eventId: redirectEventId(batchId, i),
      name: 'REDIRECT',
      platform: store,
      linkId: visit.linkId,
      ts: visit.ts,
      clickIndex: i,
      install: language === undefined ? { token } : { token, language },
    });
  });
  return { batch: { batchId, clicks: visits.map((visit) => visit.click), appEvents }, tokens };
}

/** An install click as the worker derives it, for writer tests that skip the queue. */
const installRow = (linkId: string, clickedAt = at): RollupInstallClick => ({
  tokenHash: hashInstallToken(newInstallToken()).toString('hex'),
  linkId,
  platform: 'ANDROID',
  clickedAt,
  expiresAt: clickedAt + 90 * DAY,
});
const batchWith = (batchId: string, installs: RollupInstallClick[]): RollupBatch => ({ batchId, receivedClicks: 1, clicks: [], installs });

describe('install clicks', () => {
  describe('createInstallClickOf', () => {
    const salt = 'install-clicks-salt-0123456789';
    const installClickOf = createInstallClickOf(salt);
    const link = '0b8f3c1e-0000-4000-8000-00000000000a';
    const token = 'AbCdEfGhIjKlMnOpQrStUv';
    const redirect = (overrides: Partial<AppEvent> = {}): AppEvent => ({
      eventId: 'b:0',
      name: 'REDIRECT',
      platform: 'ANDROID',
      linkId: link,
      ts: at,
      clickIndex: 0,
      install: { token, language: 'fr-CA' },
      ...overrides,
    });

    it('keeps the hash of the token, the expiry of its platform and the facts of its click, never the address or agent', () => {
      const android = installClickOf(redirect(), click(link, { ts: at, ip: '198.51.100.23', userAgent: UA.androidChrome }));
      expect(android).toEqual({
        tokenHash: hashInstallToken(token).toString('hex'),
        linkId: link,
        platform: 'ANDROID',
        clickedAt: at,
        expiresAt: at + 90 * DAY,
        network: networkOf('198.51.100.23', salt),
        osVersion: '14',
        deviceFamily: 'phone',
        language: 'fr',
      });
      // The same /24 is the same network; another is not.
      expect(android!.network).toBe(networkOf('198.51.100.200', salt));
      expect(android!.network).not.toBe(networkOf('198.51.101.23', salt));
      expect(JSON.stringify(android)).not.toContain('198.51.100');
      expect(JSON.stringify(android)).not.toContain(token);

      const ipad = installClickOf(
        redirect({ platform: 'IOS', install: { token } }),
        click(link, { ts: at, ip: '2001:db8:5:6:7::8', userAgent: UA.ipadSafari }),
      );
      expect(ipad).toMatchObject({ platform: 'IOS', expiresAt: at + 7 * DAY, osVersion: '16.6', deviceFamily: 'tablet' });
      expect(ipad!.network).toBe(networkOf('2001:db8:5:6::1', salt));
      expect(ipad).not.toHaveProperty('language');
    });

    it('leaves out what the visit does not tell: no click, an agent of no phone, something that is not an address', () => {
      expect(installClickOf(redirect({ clickIndex: undefined }), undefined)).toEqual({
        tokenHash: hashInstallToken(token).toString('hex'),
        linkId: link,
        platform: 'ANDROID',
        clickedAt: at,
        expiresAt: at + 90 * DAY,
        language: 'fr',
      });
      const desktop = installClickOf(
        redirect({ install: { token, language: '*' } }),
        click(link, { ip: 'unknown', userAgent: UA.windowsChrome }),
      );
      expect(desktop).not.toHaveProperty('network');
      expect(desktop).not.toHaveProperty('osVersion');
      expect(desktop).not.toHaveProperty('deviceFamily');
      expect(desktop).not.toHaveProperty('language');
      // A version no device has is cut, not stored whole.
      const long = installClickOf(redirect(), click(link, { userAgent: `Mozilla/5.0 (Linux; Android ${'9'.repeat(200)}.1) Mobile` }));
      expect(long!.osVersion).toBe('9'.repeat(16));
    });

    it('makes no row for an event that hands out no token a store could carry', () => {
      const visit = click(link, { userAgent: UA.androidChrome });
      expect(installClickOf(redirect({ platform: 'DESKTOP' }), visit)).toBeUndefined();
      expect(installClickOf(redirect({ platform: 'OTHER' }), visit)).toBeUndefined();
      expect(installClickOf(redirect({ name: 'APP_FIRST_OPEN' }), visit)).toBeUndefined();
      expect(installClickOf(redirect({ install: undefined }), visit)).toBeUndefined();
      for (const bad of ['short', `${token}x`, 'AbCdEfGhIjKlMnOpQrSt==', 'AbCdEfGhIjKlMnOpQrSt.v']) {
        expect(installClickOf(redirect({ install: { token: bad } }), visit), bad).toBeUndefined();
      }
    });
  });

  describe('with PostgreSQL and the queue', () => {
    let env: TestEnvironment;
    let producer: ClickProducer;
    let app: ClickWorker | undefined;
    const captured = capturingLogger();

    beforeAll(async () => {
      env = await createTestEnvironment({ WORKER_CONCURRENCY: '3' });
      producer = clickProducer(env);
    });
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });
    afterAll(async () => {
      await producer.close();
      await env.close();
    });

    const start = async () => {
      app = await createWorker({ config: env.config, sql: env.sql, redis: env.redis, log: captured.log, schedule: false });
      return app;
    };
    const rowsOf = (linkId: string) =>
      env.sql<
        {
          tokenHash: string;
          platform: string;
          clickedAt: Date;
          expiresAt: Date;
          network: string | null;
          osVersion: string | null;
          deviceFamily: string | null;
          language: string | null;
          claimedAt: Date | null;
        }[]
      >`
        SELECT encode(token_hash, 'hex') AS "tokenHash", platform, clicked_at AS "clickedAt", expires_at AS "expiresAt", network,
               os_version AS "osVersion", device_family AS "deviceFamily", language, claimed_at AS "claimedAt"
        FROM install_clicks WHERE link_id = ${linkId} ORDER BY clicked_at`;
    const countOf = async (linkId: string) =>
      (await env.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM install_clicks WHERE link_id = ${linkId}`)[0]!.n;
    const redirects = async (linkId: string) =>
      (
        await env.sql<{ n: number }[]>`
          SELECT coalesce(sum(count), 0)::int AS n FROM app_event_hourly WHERE link_id = ${linkId} AND event = 'REDIRECT'`
      )[0]!.n;
    const recorded = async (batchId: string) => (await env.sql`SELECT 1 FROM processed_batches WHERE batch_id = ${batchId}`).length === 1;
    const hex = (token: string) => hashInstallToken(token).toString('hex');

    it('stores each store visit with a token once, hashed, with the facts of its click, beside the batch’s rollups', async () => {
      const [link] = await createLinks(env.sql, 1);
      const { batch, tokens } = storeBatch('installs-1', [
        { click: click(link!, { ts: at, ip: '203.0.113.9', userAgent: UA.androidChrome }), store: 'ANDROID', language: 'de-AT' },
        { click: click(link!, { ts: at + 1_000, ip: '2001:db8:1:2:3::4', userAgent: UA.iphoneSafari }), store: 'IOS' },
        // A platform with no store hands out no token the worker would keep; a plain click has none.
        { click: click(link!, { ts: at + 2_000, userAgent: UA.windowsChrome }), store: 'DESKTOP' },
        { click: click(link!, { ts: at + 3_000 }) },
      ]);
      await start();
      await producer.add(batch);
      await waitForIdle(producer.queue);

      expect(await rowsOf(link!)).toEqual([
        {
          tokenHash: hex(tokens[0]!),
          platform: 'ANDROID',
          clickedAt: new Date(at),
          expiresAt: new Date(at + 90 * DAY),
          network: networkOf('203.0.113.9', env.config.VISITOR_SALT)!,
          osVersion: '14',
          deviceFamily: 'phone',
          language: 'de',
          claimedAt: null,
        },
        {
          tokenHash: hex(tokens[1]!),
          platform: 'IOS',
          clickedAt: new Date(at + 1_000),
          expiresAt: new Date(at + 1_000 + 7 * DAY),
          network: networkOf('2001:db8:1:2::', env.config.VISITOR_SALT)!,
          osVersion: '17.5',
          deviceFamily: 'phone',
          language: null,
          claimedAt: null,
        },
      ]);
      // Neither a token nor an address is anywhere in the table.
      const [text] = await env.sql<
        { all: string }[]
      >`SELECT string_agg(t::text, ' ') AS all FROM install_clicks t WHERE link_id = ${link!}`;
      for (const secret of [...tokens, '203.0.113', '2001:db8']) expect(text!.all).not.toContain(secret);
      expect(await rolledUpClicks(env.sql, link!)).toBe(4);
      expect(await redirects(link!)).toBe(3);
    });

    it('writes the rows once when the same batch comes again, and a token stored before neither again nor as a failure', async () => {
      const [link, other] = await createLinks(env.sql, 2);
      const { batch, tokens } = storeBatch('installs-again', [
        { click: click(link!, { ts: at, userAgent: UA.androidChrome }), store: 'ANDROID' },
        { click: click(link!, { ts: at + 1, userAgent: UA.iphoneSafari }), store: 'IOS' },
      ]);
      await start();
      await producer.add(batch);
      await waitForIdle(producer.queue);
      const first = await rowsOf(link!);
      expect(first).toHaveLength(2);

      // The same batch under another job id (a replay): its id is recorded, so nothing is added.
      await producer.add(batch, { jobId: 'installs-again-replayed' });
      // Another batch carrying one of the same tokens, on another link: the token keeps its first row.
      const reused: ClickBatch = {
        batchId: 'installs-reused',
        clicks: [click(other!, { ts: at + 5, userAgent: UA.androidChrome })],
        appEvents: [{ ...batch.appEvents![0]!, eventId: redirectEventId('installs-reused', 0), linkId: other!, ts: at + 5, clickIndex: 0 }],
      };
      await producer.add(reused);
      await waitForIdle(producer.queue);

      expect(await rowsOf(link!)).toEqual(first);
      expect(first.map((row) => row.tokenHash)).toEqual(tokens.map(hex));
      expect(await countOf(other!)).toBe(0);
      expect(await recorded('installs-reused')).toBe(true);
      expect(await rolledUpClicks(env.sql, other!)).toBe(1);
      expect(await producer.queue.getFailedCount()).toBe(0);
    });

    it('writes the rows of batches sharing a transaction, and once when one of them was recorded before', async () => {
      const [link] = await createLinks(env.sql, 1);
      const rollups = rollupsRepository(env.sql);
      // The batches of each call, to tell a shared transaction from batches written one by one.
      const calls: string[][] = [];
      const writer = createRollupWriter(
        {
          ...rollups,
          recordBatches: (batches, rows) => {
            calls.push(batches.map((b) => b.batchId));
            return rollups.recordBatches(batches, rows);
          },
        },
        // Paced: batches written while a transaction waits for its turn share it.
        { minIntervalMs: 500 },
      );
      const [a, b, c, d, e] = [0, 1, 2, 3, 4].map((i) => installRow(link!, at + i)) as [RollupInstallClick, ...RollupInstallClick[]];
      expect(await writer.write(batchWith('shared-a', [a]))).toBe(true);
      // A redelivered batch sharing a transaction with a new one: the transaction is written again
      // batch by batch, and only the new batch adds its row.
      expect(await Promise.all([writer.write(batchWith('shared-a', [a])), writer.write(batchWith('shared-e', [e!]))])).toEqual([
        false,
        true,
      ]);
      // Two new batches sharing a transaction: both rows, in it.
      expect(await Promise.all([writer.write(batchWith('shared-b', [b!])), writer.write(batchWith('shared-c', [c!, d!]))])).toEqual([
        true,
        true,
      ]);
      expect(calls).toEqual([['shared-a'], ['shared-a', 'shared-e'], ['shared-a'], ['shared-e'], ['shared-b', 'shared-c']]);
      const times = await env.sql<{ at: Date }[]>`
        SELECT processed_at AS at FROM processed_batches WHERE batch_id IN ('shared-b', 'shared-c')`;
      expect(new Set(times.map((row) => row.at.getTime())).size).toBe(1);
      expect((await rowsOf(link!)).map((row) => row.tokenHash)).toEqual([a, b, c, d, e].map((row) => row!.tokenHash));
    });

    it('skips the rows of a link deleted before its batch, without failing the batch', async () => {
      const [kept, deleted] = await createLinks(env.sql, 2);
      await linksRepository(env.sql).delete(deleted!);
      const { batch } = storeBatch('installs-deleted', [
        { click: click(deleted!, { ts: at, userAgent: UA.androidChrome }), store: 'ANDROID' },
        { click: click(kept!, { ts: at, userAgent: UA.androidChrome }), store: 'ANDROID' },
      ]);
      await start();
      await producer.add(batch);
      await waitForIdle(producer.queue);
      expect(await recorded('installs-deleted')).toBe(true);
      expect(await countOf(deleted!)).toBe(0);
      expect(await countOf(kept!)).toBe(1);
      expect(await producer.queue.getFailedCount()).toBe(0);
    });

    it('goes with its link when the link is deleted later', async () => {
      const [link] = await createLinks(env.sql, 1);
      await rollupsRepository(env.sql).recordBatch(batchWith('installs-cascade', [installRow(link!)]));
      expect(await countOf(link!)).toBe(1);
      await linksRepository(env.sql).delete(link!);
      expect(await countOf(link!)).toBe(0);
    });

    it('writes no install row for batches without tokens, and rolls them up as before', async () => {
      const [link] = await createLinks(env.sql, 1);
      const { batch } = storeBatch('no-tokens', [
        { click: click(link!, { ts: at, userAgent: UA.androidChrome }), store: 'ANDROID' },
        { click: click(link!, { ts: at + 1 }) },
      ]);
      // The redirector's REDIRECT of a store visit without install attribution: no token.
      const withoutTokens: ClickBatch = { ...batch, appEvents: batch.appEvents!.map(({ install: _, ...event }) => event) };
      await start();
      await producer.add(withoutTokens);
      await producer.add({ batchId: 'plain', clicks: [click(link!, { ts: at + 2 })] });
      await waitForIdle(producer.queue);
      expect(await countOf(link!)).toBe(0);
      expect(await rolledUpClicks(env.sql, link!)).toBe(3);
      expect(await redirects(link!)).toBe(1);
      // Their sums carry no install rows, so the statement has no insert for them.
      const rows = new RollupRows().add([], [], [{ linkId: link!, bucket: at, name: 'REDIRECT', platform: 'ANDROID', visitor: 'v1' }]);
      expect(rows.toArrays().installs.hashes).toEqual([]);
    });

    it('prunes rows whose token expired, in bounded chunks, and keeps the others', async () => {
      const [link] = await createLinks(env.sql, 1);
      // Before any other test's rows expire, so that only this test's go.
      const now = new Date(at);
      const expired = Array.from({ length: 5 }, (_, i) => installRow(link!, now.getTime() - 91 * DAY + i));
      const live = [installRow(link!, now.getTime() - 89 * DAY), installRow(link!, now.getTime())];
      const rollups = rollupsRepository(env.sql);
      await rollups.recordBatch(batchWith('prune-1', [...expired, ...live]));
      expect(await countOf(link!)).toBe(7);

      // Two chunks of two: four go, the fifth waits for the next run.
      expect(await rollups.pruneExpiredInstallClicks(now, { chunk: 2, maxChunks: 2 })).toBe(4);
      expect(await countOf(link!)).toBe(3);
      expect(await pruneInstallClicks(rollups, now)).toEqual({ removed: 1 });
      expect((await rowsOf(link!)).map((row) => row.tokenHash)).toEqual(live.map((row) => row.tokenHash));
      expect(await pruneInstallClicks(rollups, now)).toEqual({ removed: 0 });
    });
  });
});
