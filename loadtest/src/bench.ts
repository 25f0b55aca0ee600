// `npm run bench`: brings up a private copy of the stack on this machine and measures the
// redirector against a bare uWebSockets.js server (the limit) and a Fastify + Redis shortener
// (the peer), then the click pipeline: worker throughput, freshness, loss, the whole stack's
// capacity (the highest rate it holds), and the one-year analytics query. Prints a table, writes JSON under .bench/. See docs/loadtest.md.
// Every server runs from its esbuild bundle (scripts/build.mjs), built once here: what production runs.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';
import { join } from 'node:path';
import { BENCH_TARGETS, buildBundles, SERVICES } from '../../scripts/build.mjs';
import {
  answers,
  freePort,
  healthy,
  startProcess,
  type ProcessOptions,
  type ReadyCheck,
  type RunningProcess,
} from '@deeplink/test-kit/processes';
import { UA } from '@deeplink/test-kit/user-agents';
import { rollupsRepository } from '@deeplink/core/db';
import { metricValue, queueCounts, settledClickMetrics, waitForDrain } from './measure/drain.js';
import { measureFreshness } from './measure/freshness.js';
import { measureAtRate, measureInterleaved, roundsFor, type HttpRun } from './measure/http.js';
import { measureApiReads } from './measure/api-reads.js';
import { createAppKey, installRequests, measureAppSdk, openRequests } from './measure/app-sdk.js';
import { accountLoss, sendLossTraffic } from './measure/loss.js';
import { cpuParts } from './measure/cpu-cost.js';
import { humanRotation, measurePipeline } from './measure/pipeline.js';
import { measureYearQuery, YEAR_QUERY_FILTERS } from './measure/query.js';
import { countryAddresses, yearVisitors } from './year-traffic.js';
import {
  clickBatches,
  fillClickQueue,
  throughputFromSamples,
  watchWorker,
  YEAR_HOURS,
  yearOfClickBatches,
} from './measure/worker-throughput.js';
import { evaluateTargets, formatRedirectorReport, formatReport, Progress, writeResult, type BenchResult } from './report.js';
import { performanceDocument } from './performance-doc.js';
import { activateDomain, androidLinkBody, createLinks, createSession, reportedClicks } from './seed.js';
import { wrkRequests } from './rotation.js';
import { loadSettings } from './settings.js';
import { createBenchWorld, repoRoot, waitForQuiet } from './stack.js';
import { ratio, summarize } from './stats.js';
import { createVisitor } from './visitor.js';

const LOSS_LINKS = 20;
/** Installs the App SDK row resolves, each with its own link and token. */
const INSTALL_LINKS = 50;
/** The bench account's custom domain (made active directly in the database): what reading Host costs. */
const CUSTOM_HOST = 'go.bench.example';
const MB = 1e6;
/** The agent of the Android-only rows: a phone's Chrome. */
const ANDROID_AGENT = UA.androidChrome;

const settings = loadSettings();
const progress = new Progress();
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const running = new Set<RunningProcess>();
const peakRssMB: Record<string, number> = {};

/** Stops a process and records its peak RSS under `label`. */
async function stop(child: RunningProcess | undefined, label = child?.name): Promise<void> {
  if (!child || !label) return;
  running.delete(child);
  await child.stop();
  peakRssMB[label] = Math.max(peakRssMB[label] ?? 0, child.peakRss() / MB);
}

function machine(): BenchResult['machine'] {
  const cpuModel = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  let wrk = 'wrk';
  try {
    execFileSync('wrk', ['-v'], { encoding: 'utf8' });
  } catch (error) {
    // `wrk -v` prints its version and exits non-zero.
    wrk =
      String((error as { stdout?: string }).stdout ?? '')
        .split('\n')[0]
        ?.split(' Copyright')[0] ?? 'wrk';
  }
  return { nproc: availableParallelism(), cpuModel, memoryGiB: totalmem() / 1024 ** 3, node: process.versions.node, wrk };
}

/** What a `BENCH_ONLY=redirector` run measured: the full-speed table alone. */
interface RedirectorOnlyResult {
  only: 'redirector';
  startedAt: string;
  finishedAt: string;
  machine: BenchResult['machine'];
  settings: BenchResult['settings'];
  http: Omit<BenchResult['http'], 'halfRate'>;
}

async function run(world: Awaited<ReturnType<typeof createBenchWorld>>, logDir: string): Promise<BenchResult | RedirectorOnlyResult> {
  const startedAt = new Date().toISOString();
  const phases = 10;
  /** Everything, or (BENCH_ONLY=redirector) only what the full-speed table needs. */
  const full = settings.only === undefined;
  const phase = (n: number, text: string) => progress.phase(`[${n}/${phases}] ${text}`);
  const [
    apiPort,
    pinnedApiPort,
    redirectorPort,
    workerPort,
    pipelinePort,
    barePort,
    bareAddressPort,
    peerPort,
    insertPeerPort,
    apiMetricsPort,
    redirectorMetricsPort,
  ] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const shortUrlBase = `http://127.0.0.1:${redirectorPort}`;
  const redirectorMetrics = `http://127.0.0.1:${redirectorMetricsPort}/metrics`;
  const env = {
    ...world.env,
    API_PORT: String(apiPort),
    API_METRICS_PORT: String(apiMetricsPort),
    REDIRECTOR_PORT: String(redirectorPort),
    REDIRECTOR_METRICS_PORT: String(redirectorMetricsPort),
    SHORT_URL_BASE: shortUrlBase,
  };
  const profileDir = join(repoRoot, '.bench', 'profiles', stamp);
  /** Starts a bundle (with the flags it always runs with), logging to `<name>.log`, plus the profiler when asked. */
  const start = async ({
    bundle,
    name,
    ...options
  }: Pick<ProcessOptions, 'env' | 'cpus'> & { name: string; bundle: string; ready: ReadyCheck }) => {
    const profiling = settings.profile.includes(name) ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, name)}`] : [];
    if (profiling.length > 0) progress.note(`profiling ${name} into ${profileDir}`);
    return startProcess(bundle, {
      ...options,
      name,
      nodeArgs: profiling,
      logFile: join(logDir, `${name}.log`),
      onSpawn: (child) => running.add(child),
    });
  };

  phase(1, 'starting the API and seeding links');
  const api = await start({ name: 'api', bundle: 'api', env, ready: healthy(apiUrl) });
  const account = await createSession(`${apiUrl}/api`, 'bench');
  const links = await createLinks(account, settings.links, 'bench');
  progress.update(`${links.length} links`);
  const lossLinks = full ? await createLinks(account, LOSS_LINKS, 'loss') : [];
  const freshLinks = full ? await createLinks(account, settings.freshnessSamples, 'fresh') : [];
  const [yearLink] = full ? await createLinks(account, 1, 'year') : [];
  const capacityLinks = full ? await createLinks(account, settings.links, 'capacity') : [];
  const [probeLink] = full ? await createLinks(account, 1, 'probe') : [];
  const [hotLink] = full ? await createLinks(account, 1, 'hot') : [];
  await activateDomain(world.sql, account, CUSTOM_HOST);
  const customLinks = await createLinks(account, settings.links, 'custom', { domain: CUSTOM_HOST });
  // Android visits only: intents falling back to the Play Store (a token minted per visit) and to a web page.
  const androidStoreLinks = await createLinks(account, settings.links, 'android-store', { body: androidLinkBody('store') });
  const androidPlainLinks = await createLinks(account, settings.links, 'android-plain', { body: androidLinkBody('web') });
  progress.update(
    `${links.length + lossLinks.length + freshLinks.length + capacityLinks.length + customLinks.length + 2 * settings.links + 2} links`,
  );

  const requests = wrkRequests(links);
  /** Lets background work settle before a measurement and says so when it would not. */
  const quiet = async () => {
    const busy = await waitForQuiet();
    if (busy >= 0.15) progress.note(`the machine is still ${Math.round(busy * 100)} % busy with other work; figures will suffer`);
  };
  const http = (url: string): HttpRun => ({
    url,
    requests,
    dir: logDir,
    connections: settings.connections,
    durationMs: settings.durationMs,
    warmupMs: settings.warmupMs,
    wrkCpus: settings.wrkCpus,
    onTick: (elapsed, total) => progress.update(`${elapsed}/${total} s`),
  });

  /** Step 2: the worker's throughput on a pre-filled queue, then the query link's year through the same worker. */
  const measureWorker = async () => {
    phase(2, `worker: filling a queue with ${settings.workerClicks.toLocaleString('en-US')} clicks`);
    const workerPrefix = `${world.queuePrefix}w`;
    const linkIds = links.map((link) => link.id);
    const jobs = await fillClickQueue(world.redisUrl, workerPrefix, clickBatches(linkIds, settings.workerClicks));
    phase(2, 'worker: rolling up the pre-filled queue');
    const watching = watchWorker(world.sql, linkIds, settings.workerClicks, (done) =>
      progress.update(`${done.toLocaleString('en-US')} clicks rolled up`),
    );
    const workerEnv = { ...env, QUEUE_PREFIX: workerPrefix, WORKER_PORT: String(workerPort) };
    const benchWorker = await start({
      name: 'worker',
      bundle: 'worker',
      env: workerEnv,
      ready: healthy(`http://127.0.0.1:${workerPort}`),
    }).catch((error: unknown) => {
      watching.catch(() => {});
      throw error;
    });
    const watched = await watching;
    const speed = throughputFromSamples(watched.samples, settings.workerClicks);
    if (!speed) throw new Error('the worker finished before its progress could be timed; raise BENCH_WORKER_CLICKS');
    // Said at once too, so that a run stopped after the worker rows still gives them.
    progress.note(
      `worker throughput: ${Math.round(speed.clicksPerSecond).toLocaleString('en-US')} clicks/s (${speed.seconds.toFixed(2)} s)`,
    );

    // The one-year query's data goes through the same worker, so it lands in every rollup table the
    // worker writes, exactly as production traffic would.
    const yearClicks = YEAR_HOURS * settings.yearClicksPerHour;
    phase(2, `worker: rolling up a year of clicks for the query link (${yearClicks.toLocaleString('en-US')} clicks)`);
    // Realistic combinations of countries, agents and referrers, for the filtered query.
    const visits = yearVisitors(await countryAddresses());
    await fillClickQueue(world.redisUrl, workerPrefix, yearOfClickBatches(yearLink!.id, settings.yearClicksPerHour, Date.now(), visits));
    const year = await watchWorker(world.sql, [yearLink!.id], settings.workerClicks + yearClicks, (done) =>
      progress.update(`${(done - settings.workerClicks).toLocaleString('en-US')} clicks rolled up`),
    );
    if (year.rolledUp !== yearClicks) throw new Error(`the year's rollups hold ${year.rolledUp} clicks, not ${yearClicks}`);
    // The year's days are over: their combination rows are summed into daily ones, as the worker's
    // hourly roll-combination-days task would have done long since (the bench writes them in minutes).
    await rollupsRepository(world.sql).rollCombinationDays(new Date());
    await stop(benchWorker);
    const workerInstalls =
      settings.installPercent > 0 ? await measureWorkerInstalls(linkIds, workerEnv, settings.workerClicks + yearClicks) : undefined;
    // Statistics and a vacuumed table, as on a database that has been running a while; done now so
    // autovacuum does not compete with the HTTP runs that follow.
    await world.sql`VACUUM (ANALYZE)`;
    return { jobs, speed, watched, workerInstalls };
  };
  /**
   * The worker row again with a fresh worker, the same clicks but `installPercent` % of them
   * Android store visits with install tokens, which add an install_clicks row each. `before` is
   * the clicks processed so far.
   */
  async function measureWorkerInstalls(linkIds: string[], workerEnv: Record<string, string>, before: number) {
    const share = settings.installPercent / 100;
    phase(
      2,
      `worker: ${settings.workerClicks.toLocaleString('en-US')} clicks, ${settings.installPercent} % of them store visits with install tokens`,
    );
    const installsPrefix = `${world.queuePrefix}i`;
    await fillClickQueue(world.redisUrl, installsPrefix, clickBatches(linkIds, settings.workerClicks, undefined, undefined, share));
    const watchingInstalls = watchWorker(world.sql, linkIds, before + settings.workerClicks, (done) =>
      progress.update(`${(done - before).toLocaleString('en-US')} clicks rolled up`),
    );
    const installsWorker = await start({
      name: 'worker-installs',
      bundle: 'worker',
      env: { ...workerEnv, QUEUE_PREFIX: installsPrefix },
      ready: healthy(`http://127.0.0.1:${workerPort}`),
    }).catch((error: unknown) => {
      watchingInstalls.catch(() => {});
      throw error;
    });
    const samples = (await watchingInstalls).samples.map((sample) => ({ ...sample, done: Math.max(0, sample.done - before) }));
    await stop(installsWorker);
    const timed = throughputFromSamples(samples, settings.workerClicks);
    if (!timed) throw new Error('the worker finished before its progress could be timed; raise BENCH_WORKER_CLICKS');
    const [rows] = await world.sql<[{ n: number }]>`SELECT count(*)::int AS n FROM install_clicks`;
    progress.note(
      `worker throughput, ${settings.installPercent} % install tokens: ${Math.round(timed.clicksPerSecond).toLocaleString('en-US')} clicks/s (${timed.seconds.toFixed(2)} s, ${rows!.n.toLocaleString('en-US')} install rows)`,
    );
    return { clicks: settings.workerClicks, installPercent: settings.installPercent, ...timed, installRows: rows!.n };
  }
  const workerRun = full ? await measureWorker() : undefined;

  // The HTTP runs' redirector writes to a queue no worker reads: the worker must not compete for
  // the cores, and this backlog is not needed afterwards (cleanup deletes it).
  const redirectorSpec = (name: string, queuePrefix: string) => ({
    name,
    bundle: 'redirector',
    env: { ...env, QUEUE_PREFIX: queuePrefix },
    cpus: settings.serverCpus,
    ready: healthy(shortUrlBase),
  });
  const rounds = roundsFor(settings.durationMs, settings.rounds);
  phase(3, `full speed: the redirector (click capture on, no worker running), the limit and the peer, in ${rounds} interleaved rounds`);
  const redirector = await start(redirectorSpec('redirector', `${world.queuePrefix}h`));
  const bareServer = (name: string, port: number, readAddress: boolean) =>
    start({
      name,
      bundle: 'bare-uws',
      env: { PORT: String(port), READ_CLIENT_ADDRESS: readAddress ? '1' : '0' },
      cpus: settings.serverCpus,
      ready: answers(`http://127.0.0.1:${port}/`),
    });
  const bare = await bareServer('bare-uws', barePort, false);
  const bareWithAddress = await bareServer('bare-uws-address', bareAddressPort, true);
  const peerEnv = { PORT: String(peerPort), REDIS_URL: world.redisUrl, REDIS_PREFIX: world.redisPrefix };
  const peer = await start({
    name: 'fastify-peer',
    bundle: 'fastify-peer',
    env: peerEnv,
    cpus: settings.serverCpus,
    ready: answers(`http://127.0.0.1:${peerPort}/`),
  });
  await quiet();
  const fullSpeed = await measureInterleaved(
    [
      { name: 'redirector', url: shortUrlBase },
      // The same process, the same number of links, on the custom domain: each request names it in Host.
      { name: 'redirector-custom-domain', url: shortUrlBase, requests: wrkRequests(customLinks, { headers: { Host: CUSTOM_HOST } }) },
      // The same process, Android phones only: a Play Store fallback (a token per visit) against a web one.
      { name: 'redirector-android-store', url: shortUrlBase, requests: wrkRequests(androidStoreLinks, { userAgent: ANDROID_AGENT }) },
      { name: 'redirector-android-plain', url: shortUrlBase, requests: wrkRequests(androidPlainLinks, { userAgent: ANDROID_AGENT }) },
      { name: 'bare-uws', url: `http://127.0.0.1:${barePort}` },
      { name: 'bare-uws-address', url: `http://127.0.0.1:${bareAddressPort}` },
      { name: 'fastify-peer', url: `http://127.0.0.1:${peerPort}` },
    ],
    http(shortUrlBase),
    rounds,
    (text) => progress.update(text),
  );
  const {
    redirector: redirectorMax,
    'redirector-custom-domain': customDomain,
    'redirector-android-store': androidStore,
    'redirector-android-plain': androidPlain,
    'bare-uws': limit,
    'bare-uws-address': limitWithAddress,
    'fastify-peer': peerFigure,
  } = fullSpeed;
  await Promise.all([stop(bare), stop(bareWithAddress), stop(peer)]);
  if (!full || !workerRun) {
    await stop(redirector);
    await stop(api);
    progress.end();
    const http = { redirector: redirectorMax, customDomain, androidStore, androidPlain, limit, limitWithAddress, peer: peerFigure };
    const { output: _output, ...recorded } = settings;
    return { only: 'redirector', startedAt, finishedAt: new Date().toISOString(), machine: machine(), settings: recorded, http };
  }
  const { jobs, speed, watched, workerInstalls } = workerRun;

  phase(4, `redirector at half its maximum (${Math.round(redirectorMax.requestsPerSecond / 2).toLocaleString('en-US')} req/s)`);
  await quiet();
  const halfRate = await measureAtRate(http(shortUrlBase), 'redirector-half', redirectorMax.requestsPerSecond / 2);
  const clickCapture = await settledClickMetrics(redirectorMetrics);
  await stop(redirector);

  phase(5, `loss (${settings.lossRequests.toLocaleString('en-US')} redirects) and freshness (${freshLinks.length} samples)`);
  const pipelineRedirector = await start(redirectorSpec('redirector-pipeline', world.queuePrefix));
  const pipelineWorker = await start({
    name: 'worker-pipeline',
    bundle: 'worker',
    env: { ...env, WORKER_PORT: String(pipelinePort) },
    ready: healthy(`http://127.0.0.1:${pipelinePort}`),
  });
  const from = new Date(Date.now() - 3_600_000);
  const lossVisitor = createVisitor(shortUrlBase, 16);
  const freshVisitor = createVisitor(shortUrlBase, 1);
  const [tally, freshness] = await Promise.all([
    sendLossTraffic(lossVisitor, lossLinks, settings.lossRequests),
    measureFreshness(freshVisitor, world.sql, { apiUrl, token: account.token }, freshLinks, (n) =>
      progress.update(`${n}/${freshLinks.length} freshness samples`),
    ),
  ]);
  lossVisitor.close();
  freshVisitor.close();
  const counts = queueCounts(world.redisUrl, world.queuePrefix);
  await waitForDrain(counts, redirectorMetrics, (pending) => progress.update(`${pending.toLocaleString('en-US')} batches left`));
  const to = new Date(Date.now() + 3_600_000);
  const reported = (await Promise.all(lossLinks.map((link) => reportedClicks(account, link.id, from, to)))).reduce((a, b) => a + b, 0);
  const failedJobs = await counts.failed();
  const dropped = metricValue(await (await fetch(redirectorMetrics)).text(), 'redirector_clicks_dropped_total');
  await counts.close();
  await stop(pipelineRedirector);
  await stop(pipelineWorker);

  phase(
    6,
    `capacity: the whole stack at ${settings.pipelineStartRps.toLocaleString('en-US')} req/s and up, ${settings.pipelineStepMs / 1000} s per rate`,
  );
  // Everything on the same machine and unpinned: the redirector, the worker, Redis, PostgreSQL and wrk.
  const capacityPrefix = `${world.queuePrefix}c`;
  const capacityEnv = { ...env, QUEUE_PREFIX: capacityPrefix };
  const capacityRedirector = await start({
    name: 'redirector-capacity',
    bundle: 'redirector',
    env: capacityEnv,
    ready: healthy(shortUrlBase),
  });
  const capacityWorker = await start({
    name: 'worker-capacity',
    bundle: 'worker',
    env: { ...capacityEnv, WORKER_PORT: String(pipelinePort) },
    ready: healthy(`http://127.0.0.1:${pipelinePort}`),
  });
  const capacityCounts = queueCounts(world.redisUrl, capacityPrefix);
  const probeVisitor = createVisitor(shortUrlBase, 1);
  // Each step charges the CPU time of every part of the stack to the clicks it recorded.
  const stackParts = await cpuParts({ redirector: capacityRedirector, worker: capacityWorker }, world.sql, world.redisUrl);
  const pipelineRun = {
    url: shortUrlBase,
    metricsUrl: redirectorMetrics,
    sql: world.sql,
    counts: capacityCounts,
    probe: probeLink!,
    visitor: probeVisitor,
    dir: logDir,
    cpuParts: stackParts,
    redisUrl: world.redisUrl,
    onProgress: (text: string) => progress.update(text),
  };
  let capacity: Awaited<ReturnType<typeof measurePipeline>>;
  let hot: Awaited<ReturnType<typeof measurePipeline>>;
  try {
    await quiet();
    capacity = await measurePipeline({
      ...pipelineRun,
      links: capacityLinks,
      stepMs: settings.pipelineStepMs,
      startRps: settings.pipelineStartRps,
      factor: settings.pipelineFactor,
      maxSteps: settings.pipelineSteps,
    });

    // The viral case: every visit on one link, at the rate the stack just held over many, held for minutes.
    const hotRps = capacity.heldRps ?? settings.pipelineStartRps;
    phase(7, `one hot link: the whole stack at ${Math.round(hotRps).toLocaleString('en-US')} req/s for ${settings.hotLinkMs / 1000} s`);
    await quiet();
    hot = await measurePipeline({
      ...pipelineRun,
      links: [hotLink!],
      stepMs: settings.hotLinkMs,
      startRps: hotRps,
      factor: settings.pipelineFactor,
      maxSteps: 1,
    });
  } finally {
    probeVisitor.close();
    await capacityCounts.close();
  }
  await stop(capacityRedirector);
  await stop(capacityWorker);
  const pipeline = { ...capacity, workerPeakRssMB: peakRssMB['worker-capacity'] ?? 0 };
  const hotLinkStep = hot.steps[0] ?? null;

  phase(8, 'the insert-per-click peer: Fastify, a Redis GET and one PostgreSQL INSERT per click');
  // Unpinned, with wrk on the same cores, like the pipeline row: the whole machine records clicks.
  const insertPeer = await start({
    name: 'insert-peer',
    bundle: 'insert-peer',
    env: { ...peerEnv, PORT: String(insertPeerPort), DATABASE_URL: world.env.DATABASE_URL! },
    ready: answers(`http://127.0.0.1:${insertPeerPort}/`),
  });
  await quiet();
  const insertPeerUrl = `http://127.0.0.1:${insertPeerPort}`;
  const { 'insert-peer': insertPeerFigure } = await measureInterleaved(
    [{ name: 'insert-peer', url: insertPeerUrl }],
    { ...http(insertPeerUrl), requests: humanRotation(capacityLinks), wrkCpus: undefined },
    1,
    (text) => progress.update(text),
  );
  await stop(insertPeer);
  const [insertedRow] = await world.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM peer_clicks`;

  phase(9, 'one-year hourly analytics query');
  const yearQuery = await measureYearQuery(account, yearLink!.id, settings.queryRequests, (n) =>
    progress.update(`${n}/${settings.queryRequests} calls`),
  );
  const filteredQuery = await measureYearQuery(
    account,
    yearLink!.id,
    settings.queryRequests,
    (n) => progress.update(`${n}/${settings.queryRequests} calls with two filters`),
    YEAR_QUERY_FILTERS,
  );

  phase(10, 'API: authenticated reads and App SDK calls, the API on one core');
  // A second API pinned like the redirector, so its figure is one core's; the first serves the bench's own calls.
  const pinnedApiUrl = `http://127.0.0.1:${pinnedApiPort}`;
  const pinnedApi = await start({
    name: 'api-pinned',
    bundle: 'api',
    env: { ...env, API_PORT: String(pinnedApiPort), API_METRICS_PORT: '0' },
    cpus: settings.serverCpus,
    ready: healthy(pinnedApiUrl),
  });
  await quiet();
  const apiReads = await measureApiReads(http(pinnedApiUrl), account.token, (text) => progress.update(text));
  const appKey = await createAppKey(account);
  const appRequests = {
    open: openRequests(appKey, shortUrlBase, links),
    install: await installRequests(account, world.sql, appKey, INSTALL_LINKS),
  };
  await quiet();
  const appSdk = await measureAppSdk(http(pinnedApiUrl), appRequests, (text) => progress.update(text));
  await stop(pinnedApi);

  await stop(api);
  progress.end();

  const freshSummary = summarize(freshness.delaysMs);
  const liveSummary = summarize(freshness.liveDelaysMs);
  const yearSummary = summarize(yearQuery.durationsMs);
  const filteredSummary = summarize(filteredQuery.durationsMs);
  const { output: _output, ...recorded } = settings;
  const result: Omit<BenchResult, 'targets'> = {
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: machine(),
    settings: recorded,
    http: { redirector: redirectorMax, customDomain, androidStore, androidPlain, limit, limitWithAddress, peer: peerFigure, halfRate },
    apiReads,
    appSdk,
    clickCapture,
    ratios: {
      toLimit: ratio(redirectorMax.requestsPerSecond, limit.requestsPerSecond),
      toPeer: ratio(redirectorMax.requestsPerSecond, peerFigure.requestsPerSecond),
      pipelineToInsertPeer: pipeline.heldRps === null ? null : ratio(pipeline.heldRps, insertPeerFigure.requestsPerSecond),
    },
    worker: {
      clicks: settings.workerClicks,
      jobs,
      seconds: speed.seconds,
      clicksPerSecond: speed.clicksPerSecond,
      rolledUp: watched.rolledUp,
    },
    ...(workerInstalls && { workerInstalls }),
    freshness: {
      samples: freshSummary.count,
      p50Ms: freshSummary.p50,
      p99Ms: freshSummary.p99,
      maxMs: freshSummary.max,
      timeouts: freshness.timeouts,
    },
    liveFreshness: {
      samples: liveSummary.count,
      p50Ms: liveSummary.p50,
      p99Ms: liveSummary.p99,
      maxMs: liveSummary.max,
      timeouts: freshness.liveTimeouts,
    },
    loss: { ...tally, ...accountLoss(tally, reported), failedJobs, droppedByRedirector: dropped ?? null },
    yearQuery: { requests: yearSummary.count, buckets: yearQuery.buckets, p50Ms: yearSummary.p50, p99Ms: yearSummary.p99 },
    yearQueryFiltered: {
      filters: new URLSearchParams([...YEAR_QUERY_FILTERS]).toString(),
      requests: filteredSummary.count,
      buckets: filteredQuery.buckets,
      totalClicks: filteredQuery.totalClicks,
      yearClicks: yearQuery.totalClicks,
      p50Ms: filteredSummary.p50,
      p99Ms: filteredSummary.p99,
    },
    pipeline,
    hotLink: { stepMs: settings.hotLinkMs, step: hotLinkStep },
    insertPeer: { ...insertPeerFigure, rows: insertedRow!.n },
    peakRssMB,
  };
  return { ...result, targets: evaluateTargets(result) };
}

/** Writes a full run's JSON (and, with the default output, latest.json and docs/performance.md) and prints its report. */
function reportFull(result: BenchResult): void {
  const output = settings.output ?? join(repoRoot, '.bench', `bench-${stamp}.json`);
  writeResult(output, result);
  if (!settings.output) {
    writeResult(join(repoRoot, '.bench', 'latest.json'), result);
    const doc = join(repoRoot, 'docs', 'performance.md');
    writeFileSync(doc, performanceDocument(result, existsSync(doc) ? readFileSync(doc, 'utf8') : undefined));
  }
  console.log(formatReport(result));
  console.log(`\nJSON: ${output}`);
}

async function main(): Promise<void> {
  const logDir = join(repoRoot, '.bench', 'logs', stamp);
  mkdirSync(logDir, { recursive: true });
  progress.phase('[0/10] bundling the services and the comparison servers');
  try {
    const built = await buildBundles([...SERVICES, ...BENCH_TARGETS]);
    progress.note(`bundled ${built.names.join(', ')} in ${built.ms} ms`);
  } catch (error) {
    progress.end();
    console.error(`bench failed: cannot build: ${(error as Error).message}`);
    process.exit(1);
  }
  progress.phase('[0/10] bringing up Redis and PostgreSQL, creating the bench database');
  const world = await createBenchWorld();
  progress.note(`database deeplink_bench_${world.id}, Redis prefix ${world.redisPrefix}, queue prefix ${world.queuePrefix}`);
  let failed = true;
  let cleaning: Promise<void> | undefined;
  // Once only: a signal may arrive while the run is still failing its way to the finally block.
  const cleanUp = () =>
    (cleaning ??= (async () => {
      await Promise.allSettled([...running].map((child) => stop(child)));
      await world.close(settings.keep).catch((error: unknown) => console.error(`bench cleanup failed: ${error}`));
      if (!failed && !settings.keep) rmSync(logDir, { recursive: true, force: true });
    })());
  // Interrupted (Ctrl-C, a test runner's timeout, a closed terminal): still stop the services and
  // drop the bench database and keys. Errors of the run being torn down no longer matter then.
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.once(signal, () => {
      process.on('unhandledRejection', () => {});
      void cleanUp().finally(() => process.exit(code));
    });
  }
  try {
    const result = await run(world, logDir);
    if ('only' in result) {
      // A partial run: a file of its own, and neither latest.json nor docs/performance.md.
      const output = settings.output ?? join(repoRoot, '.bench', `bench-redirector-${stamp}.json`);
      writeFileSync(output, `${JSON.stringify(result, null, 2)}\n`);
      console.log(`${formatRedirectorReport(result.settings, result.http)}\n\nJSON: ${output}`);
    } else {
      reportFull(result);
    }
    failed = false;
  } catch (error) {
    progress.end();
    console.error(`bench failed: ${(error as Error).stack ?? error}\nprocess logs: ${logDir}`);
  } finally {
    await cleanUp();
  }
  process.exit(failed ? 1 : 0);
}

await main();
