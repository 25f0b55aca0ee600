// Peak memory of the API process while it streams a large account-wide export. Prints figures;
// asserts nothing about time. Run: npx tsx test/export-memory.ts [links] [layout] [format]
// (defaults: 1000 links, wide, csv: a year of hourly rows, 8.76 million of them).
import { rollupPartitions } from '@deeplink/core/db';
import { createTestEnvironment } from '@deeplink/test-kit/environment';
import setup from '@deeplink/test-kit/global-setup';
import { freePort, healthy, readMemory, startProcess } from '@deeplink/test-kit/processes';

const [linkCount = 1000, layout = 'wide', format = 'csv'] = [Number(process.argv[2] ?? 1000), process.argv[3], process.argv[4]];
const YEAR = { start: '2025-01-01', end: '2025-12-31' };

/** Resident set size now and at its peak (VmHWM) of a process, in MiB. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const memory = readMemory(pid);
  if (!memory) throw new Error(`process ${pid} is gone`);
  return { rss: memory.rss / 2 ** 20, peak: memory.peakRss / 2 ** 20 };
}

await setup();
const env = await createTestEnvironment();
const [apiPort, metricsPort] = [await freePort(), await freePort()];
const api = await startProcess('api', {
  env: {
    ...env.env,
    LOG_LEVEL: 'warn',
    API_PORT: String(apiPort),
    API_METRICS_PORT: String(metricsPort),
    SHORT_URL_BASE: 'https://s.example',
  },
  ready: healthy(`http://127.0.0.1:${metricsPort}`),
});
try {
  const base = `http://127.0.0.1:${apiPort}/api`;
  const registered = await fetch(`${base}/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Analyst', email: 'analyst@example.com', password: 'correct horse battery' }),
  });
  const { token, user } = ((await registered.json()) as { data: { token: string; user: { id: string } } }).data;

  // The links, and one click a day per link (hourly rows and their breakdowns), written directly.
  const { sql } = env;
  await rollupPartitions(sql).ensure(Array.from({ length: 12 }, (_, month) => new Date(Date.UTC(2025, month, 1))));
  await sql`
    INSERT INTO links (user_id, code, title, default_url, tags)
    SELECT ${user.id}, 'mem' || n, 'Link ' || n, 'https://example.com/' || n, ARRAY['spring']
    FROM generate_series(1, ${linkCount}) n`;
  await sql`
    INSERT INTO click_hourly (link_id, bucket, clicks, visitors)
    SELECT l.id, d + make_interval(hours => (abs(hashtext(l.id::text)) % 24)), 1, hll_add(hll_empty(), hll_hash_text(l.id::text || d))
    FROM links l, generate_series(timestamptz '2025-01-01', timestamptz '2025-12-31', interval '1 day') d
    WHERE l.user_id = ${user.id}`;
  await sql`
    INSERT INTO click_hourly_dimensions (link_id, bucket, dimension, value, clicks)
    SELECT h.link_id, h.bucket, v.dimension, v.value, 1
    FROM click_hourly h, (VALUES ('platform', 'android'), ('device', 'Mobile'), ('country', 'FR'), ('browser', 'Chrome')) v(dimension, value)`;
  await sql`ANALYZE`;

  // Warm up (first requests compile schemas and fill pools), then take the baseline.
  await (
    await fetch(`${base}/analytics/export?layout=${layout}&format=${format}&startDate=2025-01-01&endDate=2025-01-02`, {
      headers: { authorization: `Bearer ${token}` },
    })
  ).text();
  const before = memoryOf(api.child.pid!);

  const started = Date.now();
  const response = await fetch(
    `${base}/analytics/export?layout=${layout}&format=${format}&timeBucket=hour&startDate=${YEAR.start}&endDate=${YEAR.end}`,
    { headers: { authorization: `Bearer ${token}` } },
  );
  let bytes = 0;
  let lines = 0;
  let highest = before.rss;
  const sampler = setInterval(() => {
    highest = Math.max(highest, memoryOf(api.child.pid!).rss);
  }, 100);
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    for (const byte of chunk) if (byte === 10) lines++;
  }
  clearInterval(sampler);
  const after = memoryOf(api.child.pid!);
  console.log(
    JSON.stringify({
      links: linkCount,
      layout,
      format,
      status: response.status,
      lines,
      mebibytes: Math.round(bytes / 2 ** 20),
      seconds: (Date.now() - started) / 1000,
      rssBeforeMiB: Math.round(before.rss),
      rssSampledPeakMiB: Math.round(highest),
      peakRssMiB: Math.round(after.peak),
      peakRssBeforeMiB: Math.round(before.peak),
    }),
  );
} finally {
  await api.stop();
  await env.close();
}
