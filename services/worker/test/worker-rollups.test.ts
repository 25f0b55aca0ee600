import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppEvent,
  CLICK_BATCH_JOB,
  type ClickEvent,
  DIMENSION_NAMES,
  packClickBatch,
  type PackedClickBatch,
  PREVIEW_CRAWLERS,
  redirectEventId,
} from '@deeplink/core';
import { analyticsRepository, linksRepository, rollupsRepository } from '@deeplink/core/db';
import { createTestEnvironment, type TestEnvironment } from '@deeplink/test-kit/environment';
import { createWorker, type ClickWorker } from '../src/app.js';
import {
  HOUR,
  UA,
  capturingLogger,
  click,
  clickProducer,
  createLinks,
  dimensionTotals,
  rolledUpClicks,
  uniqueVisitors,
  waitForIdle,
  type ClickProducer,
} from './helpers.js';

describe('click batch worker', () => {
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
  const batchRecorded = async (batchId: string) =>
    (await env.sql`SELECT 1 FROM processed_batches WHERE batch_id = ${batchId}`).length === 1;

  it('counts link-preview crawler visits as previews, by hour, and never as clicks', async () => {
    const [link] = await createLinks(env.sql, 1);
    const hour = Date.UTC(2026, 2, 2, 9);
    const crawlers = PREVIEW_CRAWLERS.map((crawler, i) => click(link!, { ts: hour + i, userAgent: crawler.example }));
    await start();
    await producer.add({
      batchId: 'previews-1',
      clicks: [
        ...crawlers,
        click(link!, { ts: hour + HOUR, userAgent: PREVIEW_CRAWLERS[0].example }),
        click(link!, { ts: hour + 5, userAgent: UA.iphoneSafari }),
      ],
    });
    await waitForIdle(producer.queue);

    const previews = await env.sql<{ bucket: Date; previews: number }[]>`
      SELECT bucket, previews::int FROM link_previews_hourly WHERE link_id = ${link!} ORDER BY bucket`;
    expect(previews).toEqual([
      { bucket: new Date(hour), previews: PREVIEW_CRAWLERS.length },
      { bucket: new Date(hour + HOUR), previews: 1 },
    ]);
    expect(await rolledUpClicks(env.sql, link!)).toBe(1);
    const report = await analyticsRepository(env.sql).linkReport(
      link!,
      { start: new Date(hour), end: new Date(hour + HOUR), timeBucket: 'hour' },
      ['platform'],
    );
    expect(report.previews).toBe(PREVIEW_CRAWLERS.length);
    expect(report.totalClicks).toBe(1);
  });

  it('rolls clicks up by hour with platform, device, browser, os, country and referrer', async () => {
    const [link] = await createLinks(env.sql, 1);
    const hour = Date.UTC(2026, 2, 1, 12);
    const clicks = [
      click(link!, { ts: hour + 1, userAgent: UA.androidChrome, ip: '8.8.8.8', referrer: 'https://WWW.Google.com/search?q=x' }),
      click(link!, { ts: hour + 2, userAgent: UA.androidChrome, ip: '8.8.8.8', referrer: 'https://www.google.com/' }),
      click(link!, { ts: hour + 3, userAgent: UA.iphoneSafari, ip: '81.2.69.142', referrer: 'android-app://com.google.android.gm/' }),
      click(link!, { ts: hour + 4, userAgent: UA.ipadSafari, ip: '2001:4860:4860::8888', referrer: 'not a url' }),
      click(link!, { ts: hour + HOUR, userAgent: UA.windowsChrome, ip: '133.242.0.1' }),
      click(link!, { ts: hour + HOUR + 1, userAgent: UA.linuxFirefox, ip: '::ffff:194.25.0.1' }),
      click(link!, { ts: hour + HOUR + 2, userAgent: UA.macSafari, ip: '192.168.1.20' }),
      // Bots: never counted.
      click(link!, { ts: hour + 5, userAgent: UA.googlebot, ip: '66.249.66.1' }),
      click(link!, { ts: hour + 6, userAgent: UA.curl }),
    ];
    await start();
    await producer.add({ batchId: 'dims-1', clicks });
    await waitForIdle(producer.queue);

    const hours = await env.sql<{ bucket: Date; clicks: number }[]>`
      SELECT bucket, clicks FROM click_hourly WHERE link_id = ${link!} ORDER BY bucket`;
    expect(hours).toEqual([
      { bucket: new Date(hour), clicks: 4 },
      { bucket: new Date(hour + HOUR), clicks: 3 },
    ]);
    expect(await dimensionTotals(env.sql, link!, 'platform')).toEqual({ android: 2, ios: 2, desktop: 3 });
    expect(await dimensionTotals(env.sql, link!, 'device')).toEqual({ Mobile: 4, Desktop: 3 });
    expect(await dimensionTotals(env.sql, link!, 'browser')).toEqual({ Chrome: 3, 'Mobile Safari': 2, Firefox: 1, Safari: 1 });
    expect(await dimensionTotals(env.sql, link!, 'os')).toEqual({ Android: 2, iOS: 2, Windows: 1, Linux: 1, 'Mac OS': 1 });
    expect(await dimensionTotals(env.sql, link!, 'country')).toEqual({ US: 3, GB: 1, JP: 1, DE: 1, Unknown: 1 });
    expect(await dimensionTotals(env.sql, link!, 'referrer')).toEqual({
      'www.google.com': 2,
      'com.google.android.gm': 1,
      direct: 4,
    });
    const [batch] = await env.sql`SELECT clicks FROM processed_batches WHERE batch_id = 'dims-1'`;
    expect(batch?.clicks).toBe(clicks.length);
  });

  it('writes the combination of values of each click, as the per-dimension rows store them, hourly and daily', async () => {
    const [link] = await createLinks(env.sql, 1);
    const hour = Date.UTC(2026, 2, 3, 23);
    await start();
    await producer.add({
      batchId: 'combinations-1',
      clicks: [
        click(link!, { ts: hour + 1, userAgent: UA.androidChrome, ip: '8.8.8.8', referrer: 'https://WWW.Google.com/search?q=x' }),
        click(link!, { ts: hour + 2, userAgent: UA.androidChrome, ip: '8.8.8.8', referrer: 'https://www.google.com/' }),
        click(link!, { ts: hour + 3, userAgent: UA.iphoneSafari, ip: '81.2.69.142', referrer: 'android-app://com.google.android.gm/' }),
        click(link!, { ts: hour + 4, userAgent: UA.ipadSafari, ip: '2001:4860:4860::8888' }),
        click(link!, { ts: hour + HOUR, userAgent: UA.windowsChrome, ip: '133.242.0.1', referrer: 'https://t.co/x' }),
        click(link!, { ts: hour + HOUR + 1, userAgent: UA.macSafari, ip: '192.168.1.20' }),
        click(link!, { ts: hour + 5, userAgent: UA.googlebot, ip: '66.249.66.1' }),
      ],
    });
    await waitForIdle(producer.queue);

    // The daily rows as the reports read them while the days are not rolled (their hours summed),
    // then the rows the roll stores once the days are over.
    for (const table of ['click_hourly_combinations', 'click_daily_combinations_read', 'click_daily_combinations']) {
      if (table === 'click_daily_combinations') await rollupsRepository(env.sql).rollCombinationDays(new Date(hour + 48 * HOUR));
      for (const name of DIMENSION_NAMES) {
        const rows = await env.sql<{ value: string; n: number }[]>`
          SELECT ${env.sql(name)} AS value, sum(clicks)::int AS n FROM ${env.sql(table)} WHERE link_id = ${link!} GROUP BY 1`;
        expect(Object.fromEntries(rows.map((row) => [row.value, row.n])), `${table}.${name}`).toEqual(
          await dimensionTotals(env.sql, link!, name),
        );
      }
    }
    const [iphone] = await env.sql`
      SELECT platform, device, country, browser, os, referrer, clicks::int FROM click_hourly_combinations
      WHERE link_id = ${link!} AND browser = 'Mobile Safari' AND country = 'GB'`;
    expect(iphone).toEqual({
      platform: 'ios',
      device: 'Mobile',
      country: 'GB',
      browser: 'Mobile Safari',
      os: 'iOS',
      referrer: 'com.google.android.gm',
      clicks: 1,
    });
  });

  it('counts unique visitors by address and agent, across batches and hours', async () => {
    const [link] = await createLinks(env.sql, 1);
    const hour = Date.UTC(2026, 2, 2, 8);
    const visit = (n: number, ts: number) => click(link!, { ip: `8.8.${n}.1`, userAgent: UA.iphoneSafari, ts });
    await start();
    // 30 clicks from 10 visitors, spread over two batches and two hours.
    await producer.add({ batchId: 'uniq-1', clicks: Array.from({ length: 15 }, (_, i) => visit(i % 10, hour + i)) });
    await producer.add({ batchId: 'uniq-2', clicks: Array.from({ length: 15 }, (_, i) => visit((i + 5) % 10, hour + HOUR + i)) });
    await waitForIdle(producer.queue);
    expect(await rolledUpClicks(env.sql, link!)).toBe(30);
    expect(await uniqueVisitors(env.sql, link!)).toBe(10);
  });

  it('counts the store REDIRECTs of one visitor once in their unique count, as the visitor its clicks are', async () => {
    const [link] = await createLinks(env.sql, 1);
    const hour = Date.UTC(2026, 2, 3, 9);
    /** A batch of visits each sent to the Play Store, as the redirector queues them: every click with its REDIRECT. */
    const storeVisits = (batchId: string, visits: ClickEvent[]) => ({
      batchId,
      clicks: visits,
      appEvents: visits.map(
        (visit, i): AppEvent => ({
          eventId: redirectEventId(batchId, i),
          name: 'REDIRECT',
          platform: 'ANDROID',
          linkId: visit.linkId,
          ts: visit.ts,
          clickIndex: i,
        }),
      ),
    });
    const returning = (ts: number) => click(link!, { ts, ip: '203.0.113.40', userAgent: UA.androidChrome });
    await start();
    // The same person four times over two batches and two hours, another once, and a bot (a REDIRECT, never a click).
    await producer.add(
      storeVisits('store-1', [
        returning(hour + 1),
        returning(hour + 2),
        click(link!, { ts: hour + 3, ip: '203.0.113.41', userAgent: UA.androidChrome }),
      ]),
    );
    await producer.add(
      storeVisits('store-2', [
        returning(hour + HOUR),
        returning(hour + HOUR + 1),
        click(link!, { ts: hour + HOUR + 2, userAgent: UA.googlebot }),
      ]),
    );
    await waitForIdle(producer.queue);
    const [sketches] = await env.sql<{ redirects: number; clicks: number; unique: number; clickUnique: number; together: number }[]>`
      WITH c AS (SELECT hll_union_agg(visitors) AS v FROM click_hourly WHERE link_id = ${link!}),
           e AS (SELECT sum(count)::int AS n, hll_union_agg(visitors) AS v FROM app_event_hourly WHERE link_id = ${link!} AND event = 'REDIRECT')
      SELECT e.n AS redirects, (SELECT sum(clicks)::int FROM click_hourly WHERE link_id = ${link!}) AS clicks,
             hll_cardinality(e.v)::int AS unique, hll_cardinality(c.v)::int AS "clickUnique",
             hll_cardinality(hll_union(c.v, e.v))::int AS together
      FROM c, e`;
    // Six redirects by three visitors; the five human clicks by two. Merged with the clicks' sketch the
    // redirects add only the bot: the same visitors, hashed the same way.
    expect(sketches).toEqual({ redirects: 6, clicks: 5, unique: 3, clickUnique: 2, together: 3 });
    const [daily] = await env.sql<{ unique: number }[]>`
      SELECT hll_cardinality(hll_union_agg(visitors))::int AS unique FROM app_event_daily WHERE link_id = ${link!}`;
    expect(daily!.unique).toBe(3);
  });

  it('counts a batch delivered twice under different job ids once', async () => {
    const [link] = await createLinks(env.sql, 1);
    const batch = { batchId: 'dup-1', clicks: Array.from({ length: 7 }, () => click(link!)) };
    await start();
    await producer.add(batch, { jobId: 'dup-1-a' });
    await producer.add(batch, { jobId: 'dup-1-b' });
    await waitForIdle(producer.queue);
    // And once more after both finished, as a producer retrying a lost acknowledgement would.
    await producer.add(batch, { jobId: 'dup-1-c' });
    await waitForIdle(producer.queue);
    expect(await rolledUpClicks(env.sql, link!)).toBe(7);
    expect(await dimensionTotals(env.sql, link!, 'platform')).toEqual({ desktop: 7 });
    expect(await producer.queue.getFailedCount()).toBe(0);
  });

  it('rolls a batch back when it fails part-way and counts it once when the retry succeeds', async () => {
    const [link] = await createLinks(env.sql, 1);
    // The first statement that writes dimension counts fails, after the batch id and the hourly
    // totals were written in the same transaction. A sequence survives the rollback.
    await env.sql.unsafe(`
      CREATE SEQUENCE fail_once;
      CREATE FUNCTION fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('fail_once') = 1 THEN RAISE EXCEPTION 'simulated failure'; END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER fail_once BEFORE INSERT ON click_hourly_dimensions FOR EACH STATEMENT EXECUTE FUNCTION fail_once();`);
    try {
      const attempts: number[] = [];
      const worker = await start();
      worker.worker.on('completed', (job) => attempts.push(job.attemptsMade));
      await producer.add({ batchId: 'retry-1', clicks: Array.from({ length: 5 }, () => click(link!)) });
      await waitForIdle(producer.queue);
      expect(attempts).toEqual([2]); // completed on the second attempt
      expect(await rolledUpClicks(env.sql, link!)).toBe(5);
      expect(await dimensionTotals(env.sql, link!, 'device')).toEqual({ Desktop: 5 });
      expect(captured.lines.some((l) => l.msg === 'batch attempt failed, will retry')).toBe(true);
    } finally {
      await env.sql.unsafe('DROP TRIGGER fail_once ON click_hourly_dimensions; DROP FUNCTION fail_once; DROP SEQUENCE fail_once');
    }
  });

  it('skips clicks for deleted links without failing the batch', async () => {
    const [kept, deleted] = await createLinks(env.sql, 2);
    await linksRepository(env.sql).delete(deleted!);
    await start();
    await producer.add({
      batchId: 'deleted-1',
      clicks: [click(kept!), click(deleted!), click(deleted!, { userAgent: UA.androidChrome }), click(kept!)],
    });
    await waitForIdle(producer.queue);
    expect(await rolledUpClicks(env.sql, kept!)).toBe(2);
    const [rows] = await env.sql<{ n: number }[]>`
      SELECT (SELECT count(*) FROM click_hourly WHERE link_id = ${deleted!})::int
           + (SELECT count(*) FROM click_hourly_dimensions WHERE link_id = ${deleted!})::int AS n`;
    expect(rows?.n).toBe(0);
    expect(await batchRecorded('deleted-1')).toBe(true);
    expect(await producer.queue.getFailedCount()).toBe(0);
  });

  it('records the id of a batch made only of bots and skips its redelivery', async () => {
    const [link] = await createLinks(env.sql, 1);
    await start();
    await producer.add({ batchId: 'bots-1', clicks: [click(link!, { userAgent: UA.googlebot }), click(link!, { userAgent: UA.curl })] });
    await waitForIdle(producer.queue);
    expect(await batchRecorded('bots-1')).toBe(true);
    expect(await rolledUpClicks(env.sql, link!)).toBe(0);
  });

  it('keeps finished jobs out of Redis, since their data holds client addresses', async () => {
    const [link] = await createLinks(env.sql, 1);
    await start();
    await producer.add({ batchId: 'cleanup-1', clicks: [click(link!)] });
    await waitForIdle(producer.queue);
    expect(await producer.queue.getJob('cleanup-1')).toBeUndefined();
    expect(await producer.queue.getCompletedCount()).toBe(0);
  });

  it('fails malformed jobs at once, into the failed set', async () => {
    const [link] = await createLinks(env.sql, 1);
    const clicks = [click(link!)];
    await start();
    await producer.queue.add(CLICK_BATCH_JOB, { batchId: '', clicks: 'nope' } as never, { jobId: 'bad-1', attempts: 5 });
    await producer.queue.add('something-else', packClickBatch({ batchId: 'bad-2', clicks }), { jobId: 'bad-2', attempts: 5 });
    await producer.queue.add(CLICK_BATCH_JOB, packClickBatch({ batchId: 'nul\u0000id', clicks }), { jobId: 'bad-3', attempts: 5 });
    // Clicks as objects, not packed: no producer writes them any more.
    await producer.queue.add(CLICK_BATCH_JOB, { batchId: 'bad-4', clicks } as never, { jobId: 'bad-4', attempts: 5 });
    // A format no reader of this release takes (a later release's, or a typo): named in the reason.
    await producer.queue.add(CLICK_BATCH_JOB, { ...packClickBatch({ batchId: 'bad-5', clicks }), format: 'packed-9' } as never, {
      jobId: 'bad-5',
      attempts: 5,
    });
    const whole = packClickBatch({ batchId: 'bad-6', clicks });
    const cut: PackedClickBatch = { ...whole, clicks: whole.clicks.slice(0, 3) };
    await producer.queue.add(CLICK_BATCH_JOB, cut, { jobId: 'bad-6', attempts: 5 });
    await waitForIdle(producer.queue);
    const failed = await producer.queue.getFailed();
    expect(failed.map((job) => [job.id, job.attemptsMade, job.failedReason]).sort()).toEqual([
      ['bad-1', 1, 'poison: job data is not a click batch'],
      ['bad-2', 1, 'poison: unexpected job name "something-else"'],
      ['bad-3', 1, 'poison: job data is not a click batch: its id cannot be stored'],
      ['bad-4', 1, 'poison: job data is not a click batch'],
      ['bad-5', 1, 'poison: unknown click batch format "packed-9"'],
      ['bad-6', 1, 'poison: job data is not a whole "packed-2" click batch'],
    ]);
    expect(await rolledUpClicks(env.sql, link!)).toBe(0);
    await producer.queue.clean(0, 100, 'failed');
  });
});
