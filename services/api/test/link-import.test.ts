import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHarness, type ApiHarness } from './harness.js';
import { csv, TAKEOUT_HEADER, takeoutFile, takeoutRow } from './import-files.js';

let api: ApiHarness;
beforeAll(async () => {
  api = await createApiHarness();
});
afterAll(() => api.close());

type Options = { format: string; domain?: string; dryRun?: boolean; mapping?: Record<string, string> };

const createImport = async (token: string, options: Options) => {
  const response = await api.request({ method: 'POST', url: '/api/imports', token, payload: options });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.import as { id: string; status: string };
};
const sendFile = (token: string, id: string, body: string | Readable, length?: number) =>
  api.request({
    method: 'PUT',
    url: `/api/imports/${id}/file`,
    token,
    headers: { 'content-type': 'text/csv', ...(length !== undefined && { 'content-length': String(length) }) },
    payload: body,
  });
/** `text` as a stream of 64 KiB chunks. */
const chunked = (text: string) => {
  const bytes = Buffer.from(text);
  return Readable.from(Array.from({ length: Math.ceil(bytes.length / 65_536) }, (_, n) => bytes.subarray(n * 65_536, (n + 1) * 65_536)));
};
/** Creates an import and sends its file; answers the finished import. */
const importFile = async (token: string, options: Options, file: string) => {
  const { id } = await createImport(token, options);
  const response = await sendFile(token, id, file);
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.import;
};
const reportOf = async (token: string, id: string, query = '') =>
  (await api.request({ method: 'GET', url: `/api/imports/${id}/rows?${query || 'limit=500'}`, token })).json().data;
const countLinks = async (userId: string) =>
  (await api.env.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM links WHERE user_id = ${userId}`)[0]!.n;
const cached = (code: string) => api.env.redis.get(`${api.env.config.REDIS_PREFIX}link:${code}`);
const linkAt = async (token: string, code: string) => {
  const { links } = (await api.request({ method: 'GET', url: `/api/links?q=${code}&limit=100`, token })).json().data;
  const summary = links.find((link: { url: string }) => link.url.endsWith(`/${code}`));
  return summary && (await api.request({ method: 'GET', url: `/api/links/${summary.id}`, token })).json().data.link;
};

/** Runs `work` while sampling this process's RSS every 20 ms (the API runs in it); answers the time taken, the RSS before and the peak, in MiB. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; startRssMiB: number; peakRssMiB: number }> {
  const start = process.memoryUsage().rss;
  let peak = start;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const started = performance.now();
  try {
    const result = await work();
    return {
      result,
      ms: Math.round(performance.now() - started),
      startRssMiB: Math.round(start / 2 ** 20),
      peakRssMiB: Math.round(Math.max(peak, process.memoryUsage().rss) / 2 ** 20),
    };
  } finally {
    clearInterval(sampler);
  }
}

describe('a Takeout file of 10,000 links', () => {
  it('creates every link with its 29 columns mapped, shows progress meanwhile, then finds every row unchanged on a second run', {
    timeout: 240_000,
  }, async () => {
    const user = await api.registerUser();
    const file = takeoutFile(10_000);
    const { id } = await createImport(user.token, { format: 'takeout' });
    const seen: { status: string; rows: number; bytesRead: number }[] = [];
    let polling = true;
    const poll = (async () => {
      while (polling) {
        seen.push((await api.request({ method: 'GET', url: `/api/imports/${id}`, token: user.token })).json().data.import);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    // Sent in 64 KiB chunks, as a socket delivers an upload, with its length.
    const first = await measured(() => sendFile(user.token, id, chunked(file), file.length));
    polling = false;
    await poll;
    expect(first.result.statusCode, first.result.body).toBe(200);
    console.log(
      `Takeout import of 10,000 rows (${(file.length / 2 ** 20).toFixed(1)} MiB): ${first.ms} ms, RSS of the test process ${first.startRssMiB} MiB before, ${first.peakRssMiB} MiB at its peak`,
    );
    const done = first.result.json().data.import;
    expect(done).toMatchObject({
      status: 'done',
      rows: 10_000,
      created: 10_000,
      updated: 0,
      unchanged: 0,
      refused: 0,
      bytesRead: file.length,
    });
    expect(done.totalBytes).toBe(file.length);
    // Progress: GET saw the import running part-way through.
    expect(seen.some((state) => state.status === 'running' && state.rows > 0 && state.rows < 10_000)).toBe(true);
    expect(await countLinks(user.id)).toBe(10_000);

    const link = await linkAt(user.token, 'fdl1230');
    expect(link).toMatchObject({
      title: 'Link number 1230',
      defaultUrl: 'https://shop.example.com/item/1230',
      androidLink: { appPackageName: 'com.example.shop', minimumVersion: '42', fallbackUrl: 'https://shop.example.com/android/1230' },
      iosLink: {
        bundleId: 'com.example.shop',
        minimumVersion: '2.1',
        fallbackUrl: 'https://shop.example.com/ios/1230',
        ipadFallbackUrl: 'https://shop.example.com/ipad/1230',
        ipadBundleId: 'com.example.shop.ipad',
      },
      desktopUrl: 'https://shop.example.com/desktop/1230',
      socialPreview: { title: 'Item 1230, "special"', description: 'The best item, now on sale' },
      customParameters: { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'spring', utm_term: 'shoes', utm_content: 'banner' },
      // Every tenth row is archived in the file: imported, tagged.
      tags: ['archived'],
      createdAt: '2023-05-01T12:30:00.000Z',
    });
    expect((await linkAt(user.token, 'fdl1231')).tags).toBeUndefined();
    expect(JSON.parse((await cached('fdl1230'))!)).toMatchObject({ id: link.id, defaultUrl: link.defaultUrl });
    const report = await reportOf(user.token, id, 'limit=2');
    expect(report.pagination.total).toBe(10_000);
    expect(report.rows[0]).toMatchObject({ line: 2, code: 'fdl0', outcome: 'created' });
    expect(report.rows[0].warnings).toBeUndefined();

    const again = await measured(() => importFile(user.token, { format: 'takeout' }, file));
    console.log(`Second run of the same file: ${again.ms} ms, RSS ${again.startRssMiB} MiB before, ${again.peakRssMiB} MiB at its peak`);
    expect(again.result).toMatchObject({ status: 'done', rows: 10_000, created: 0, updated: 0, unchanged: 10_000, refused: 0 });
    expect(await countLinks(user.id)).toBe(10_000);
    expect((await linkAt(user.token, 'fdl1230')).updatedAt).toBe(link.updatedAt);
  });
});

describe('rows that cannot be links', () => {
  it('refuses each with its line and reason, writes the good rows whole, and updates a changed row', async () => {
    const owner = await api.registerUser();
    const other = await api.registerUser();
    const taken = await api.request({
      method: 'POST',
      url: '/api/links',
      token: other.token,
      payload: { title: 'Theirs', defaultUrl: 'https://example.com/', slug: 'fdl-taken' },
    });
    expect(taken.statusCode).toBe(201);
    await importFile(owner.token, { format: 'takeout' }, csv([TAKEOUT_HEADER, takeoutRow(1, 'bad'), takeoutRow(2, 'bad')]));

    const rows = [
      TAKEOUT_HEADER,
      takeoutRow(1, 'bad'), // line 2: unchanged
      takeoutRow(2, 'bad', { 1: 'https://shop.example.com/changed' }), // line 3: updated
      takeoutRow(3, 'bad'), // line 4: created
      takeoutRow(4, 'bad', { 1: 'javascript:alert(1)' }), // line 5: bad deep link
      takeoutRow(5, 'bad', { 2: 'not a package' }), // line 6: bad apn
      takeoutRow(6, 'bad', { 0: 'https://example.page.link/a/b' }), // line 7: a path of two segments
      takeoutRow(7, 'bad', { 0: 'https://example.page.link/api' }), // line 8: a reserved path
      takeoutRow(8, 'bad', { 0: 'https://example.page.link/fdl-taken' }), // line 9: another account's code
      takeoutRow(3, 'bad'), // line 10: the code of line 4 again
      takeoutRow(9, 'bad', { 0: '' }), // line 11: no short link
      takeoutRow(10, 'bad', { 13: 'ftp://example.com/' }), // line 12: bad desktop link
      takeoutRow(11, 'bad'), // line 13: created
    ];
    const done = await importFile(owner.token, { format: 'takeout' }, csv(rows));
    expect(done).toMatchObject({ status: 'done', rows: 12, created: 2, updated: 1, unchanged: 1, refused: 8 });
    const refused = (await reportOf(owner.token, done.id, 'outcome=refused')).rows;
    expect(
      refused.map((row: { line: number; code?: string; errors: { field: string }[] }) => [row.line, row.code, row.errors[0]!.field]),
    ).toEqual([
      [5, 'bad4', 'link'],
      [6, 'bad5', 'apn'],
      [7, undefined, 'Short link'],
      [8, undefined, 'Short link'],
      [9, 'fdl-taken', 'code'],
      [10, 'bad3', 'code'],
      [11, undefined, 'Short link'],
      [12, 'bad10', 'ofl'],
    ]);
    expect(refused[3].errors[0].message).toMatch(/reserved/);
    expect(refused[4].errors[0].message).toBe('is taken by another account');
    expect(refused[5].errors[0].message).toBe('repeats the code of line 4');
    const all = (await reportOf(owner.token, done.id)).rows;
    expect(all.map((row: { outcome: string }) => row.outcome)).toEqual([
      'unchanged',
      'updated',
      'created',
      ...Array(8).fill('refused'),
      'created',
    ]);

    // The good rows are whole links; the refused ones left nothing, in the database or the cache.
    expect((await linkAt(owner.token, 'bad2')).defaultUrl).toBe('https://shop.example.com/changed');
    expect((await linkAt(owner.token, 'bad11')).androidLink.fallbackUrl).toBe('https://shop.example.com/android/11');
    expect(await countLinks(owner.id)).toBe(4);
    for (const code of ['bad4', 'bad5', 'bad10']) expect(await cached(code)).toBeNull();
    expect(JSON.parse((await cached('fdl-taken'))!).defaultUrl).toBe('https://example.com/');
  });

  it('refuses a file whose columns do not fit its format, one not CSV, and one over the size limit, failing the import', async () => {
    const user = await api.registerUser();
    const missing = await createImport(user.token, { format: 'takeout' });
    const response = await sendFile(user.token, missing.id, 'Short link,Title\nhttps://x.page.link/abc,Abc\n');
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details).toEqual([{ field: 'Deep link', message: 'is a column the file lacks' }]);
    const failed = (await api.request({ method: 'GET', url: `/api/imports/${missing.id}`, token: user.token })).json().data.import;
    expect(failed).toMatchObject({ status: 'failed', error: { message: expect.stringMatching(/columns/) } });

    const broken = await createImport(user.token, { format: 'yourls' });
    const notCsv = await sendFile(user.token, broken.id, 'keyword,url\nabc,"https://example.com/\n');
    expect(notCsv.statusCode).toBe(400);
    expect(notCsv.json().error.message).toMatch(/not valid CSV/);

    const empty = await createImport(user.token, { format: 'yourls' });
    expect((await sendFile(user.token, empty.id, '')).json().error.message).toMatch(/empty/);

    // Said by Content-Length: refused before anything is read; the import still waits for a file.
    const huge = await createImport(user.token, { format: 'yourls' });
    const large = await sendFile(user.token, huge.id, `keyword,url\n${'\n'.repeat(50 * 1024 * 1024)}`);
    expect(large.statusCode).toBe(413);
    expect(large.json().error.message).toMatch(/larger than 50 MB/);
    expect((await api.request({ method: 'GET', url: `/api/imports/${huge.id}`, token: user.token })).json().data.import.status).toBe(
      'waiting',
    );
    // Sent without a length: stopped once past the limit, and failed (its one row was in a batch not yet written).
    const chunked = new PassThrough();
    // In process, the API ends the upload by destroying this very stream with its error.
    chunked.on('error', () => {});
    const stopped = sendFile(user.token, huge.id, chunked);
    chunked.write('keyword,url\nbig1,https://example.com/\n');
    const blank = '\n'.repeat(1024 * 1024);
    for (let mib = 0; mib <= 50 && !chunked.destroyed; mib++) chunked.write(blank);
    chunked.end();
    expect((await stopped).statusCode).toBe(413);
    const failedLarge = (await api.request({ method: 'GET', url: `/api/imports/${huge.id}`, token: user.token })).json().data.import;
    expect(failedLarge).toMatchObject({ status: 'failed', created: 0, error: { message: expect.stringMatching(/larger than 50 MB/) } });
    expect(failedLarge.bytesRead).toBeGreaterThan(50 * 1024 * 1024);
  });
});

describe('the row limit', () => {
  it('stops a file of more than 100,000 rows at the row past it', { timeout: 120_000 }, async () => {
    const user = await api.registerUser();
    const { id } = await createImport(user.token, { format: 'yourls', dryRun: true });
    // Rows without a keyword: each is refused at once, so the file costs only its report.
    const response = await sendFile(user.token, id, `keyword,url\n${'-,x\n'.repeat(100_001)}`);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.message).toBe('The file has more than 100000 rows; split it and import each part');
    const state = (await api.request({ method: 'GET', url: `/api/imports/${id}`, token: user.token })).json().data.import;
    expect(state).toMatchObject({ status: 'failed', rows: 100_000, refused: 100_000 });
  });
});

describe('a batch the database refuses', () => {
  it('is written again row by row: the one bad row refused, the others of its batch created', async () => {
    const user = await api.registerUser();
    // A row only the database refuses (no check before it does): this file's own database, so no other test sees it.
    await api.env.sql.unsafe(`
      CREATE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.code = 'boom1' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_boom BEFORE INSERT ON links FOR EACH ROW EXECUTE FUNCTION refuse_boom();`);
    try {
      const file = csv([TAKEOUT_HEADER, takeoutRow(0, 'boom'), takeoutRow(1, 'boom'), takeoutRow(2, 'boom')]);
      const done = await importFile(user.token, { format: 'takeout' }, file);
      expect(done).toMatchObject({ status: 'done', rows: 3, created: 2, refused: 1 });
      expect((await reportOf(user.token, done.id, 'outcome=refused')).rows).toEqual([
        { line: 3, code: 'boom1', outcome: 'refused', errors: [{ field: '(row)', message: 'could not be written' }] },
      ]);
      expect(await countLinks(user.id)).toBe(2);
      expect(await cached('boom1')).toBeNull();
      expect(await cached('boom2')).not.toBeNull();
    } finally {
      await api.env.sql.unsafe('DROP TRIGGER refuse_boom ON links; DROP FUNCTION refuse_boom();');
    }
  });
});

describe('an upload cut short', () => {
  it('fails the import, keeping nothing of the batch it was reading', async () => {
    const user = await api.registerUser();
    const { id } = await createImport(user.token, { format: 'yourls' });
    const upload = new PassThrough();
    const answer = sendFile(user.token, id, upload);
    upload.write('keyword,url\ncut1,https://example.com/1\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    upload.destroy(new Error('connection reset'));
    // The client sees its upload fail at once; the API marks the import failed as it notices.
    await answer.catch(() => {});
    const state = () => api.request({ method: 'GET', url: `/api/imports/${id}`, token: user.token }).then((r) => r.json().data.import);
    await expect.poll(async () => (await state()).status).toBe('failed');
    expect(await state()).toMatchObject({ created: 0, error: { message: 'The upload ended before the end of the file' } });
    expect(await countLinks(user.id)).toBe(0);
  });
});

describe('a dry run', () => {
  it('reports what a real run would do and writes no link', async () => {
    const user = await api.registerUser();
    const file = csv([TAKEOUT_HEADER, takeoutRow(1, 'dry'), takeoutRow(2, 'dry', { 1: 'not a url' }), takeoutRow(3, 'dry')]);
    const dry = await importFile(user.token, { format: 'takeout', dryRun: true }, file);
    expect(dry).toMatchObject({ dryRun: true, status: 'done', rows: 3, created: 2, refused: 1 });
    expect(await countLinks(user.id)).toBe(0);
    expect(await cached('dry1')).toBeNull();
    const dryRows = (await reportOf(user.token, dry.id)).rows;

    const real = await importFile(user.token, { format: 'takeout' }, file);
    expect(real).toMatchObject({ dryRun: false, rows: 3, created: 2, refused: 1 });
    const realRows = (await reportOf(user.token, real.id)).rows;
    const strip = (rows: { linkId?: string }[]) => rows.map(({ linkId: _id, ...row }) => row);
    expect(strip(realRows)).toEqual(strip(dryRows));
  });
});

describe('other formats', () => {
  const links = async (token: string) => {
    const { links } = (
      await api.request({ method: 'GET', url: '/api/links?limit=100&include=tags&sortBy=title&sortDirection=asc', token })
    ).json().data;
    return links.map((link: { url: string; defaultUrl: string; title: string; tags: string[] }) => ({
      code: link.url.split('/').pop(),
      defaultUrl: link.defaultUrl,
      title: link.title,
      tags: link.tags,
    }));
  };

  it("reads Bitly's links export", async () => {
    const user = await api.registerUser();
    const file = csv([
      ['id', 'link', 'long_url', 'title', 'created_at', 'archived', 'tags'],
      ['bit.ly/3AbCdEf', 'https://bit.ly/3AbCdEf', 'https://example.com/a', 'Alpha', '2021-03-04T05:06:07+0000', 'false', 'spring,email'],
      ['bit.ly/my-sale', 'https://bit.ly/my-sale', 'https://example.com/b', 'Beta', '2021-03-05T05:06:07+0000', 'true', ''],
    ]);
    expect(await importFile(user.token, { format: 'bitly' }, file)).toMatchObject({ created: 2, refused: 0 });
    expect(await links(user.token)).toEqual([
      { code: '3AbCdEf', defaultUrl: 'https://example.com/a', title: 'Alpha', tags: ['spring', 'email'] },
      { code: 'my-sale', defaultUrl: 'https://example.com/b', title: 'Beta', tags: ['archived'] },
    ]);
    expect((await linkAt(user.token, '3AbCdEf')).createdAt).toBe('2021-03-04T05:06:07.000Z');
  });

  it("reads Shlink's short URL export", async () => {
    const user = await api.registerUser();
    const file = csv([
      ['createdAt', 'domain', 'shortCode', 'shortUrl', 'longUrl', 'title', 'tags', 'visits'],
      ['2022-01-02T03:04:05+00:00', '', 'abc12', 'https://s.test/abc12', 'https://example.com/one', 'One', 'news|promo', '12'],
      ['2022-01-03T03:04:05+00:00', '', 'xyz34', 'https://s.test/xyz34', 'https://example.com/two', '', '', '0'],
    ]);
    expect(await importFile(user.token, { format: 'shlink' }, file)).toMatchObject({ created: 2 });
    expect(await links(user.token)).toEqual([
      { code: 'abc12', defaultUrl: 'https://example.com/one', title: 'One', tags: ['news', 'promo'] },
      // No title: the code names the link.
      { code: 'xyz34', defaultUrl: 'https://example.com/two', title: 'xyz34', tags: [] },
    ]);
  });

  it("reads Kutt's links, with their expiry", async () => {
    const user = await api.registerUser();
    const file = csv([
      ['id', 'address', 'target', 'description', 'expire_in', 'visit_count', 'link', 'created_at'],
      ['1', 'kutt-one', 'https://example.com/k1', 'First', '2030-01-01T00:00:00Z', '3', 'https://kutt.it/kutt-one', '2020-05-06T07:08:09Z'],
      ['2', 'kutt-two', 'https://example.com/k2', '', '', '0', 'https://kutt.it/kutt-two', '2020-05-07T07:08:09Z'],
    ]);
    expect(await importFile(user.token, { format: 'kutt' }, file)).toMatchObject({ created: 2 });
    expect((await linkAt(user.token, 'kutt-one')).expirationDate).toBe('2030-01-01T00:00:00.000Z');
    expect((await linkAt(user.token, 'kutt-two')).title).toBe('kutt-two');
  });

  it("reads YOURLS' url table", async () => {
    const user = await api.registerUser();
    const file = csv([
      ['keyword', 'url', 'title', 'timestamp', 'ip', 'clicks'],
      ['yo1', 'https://example.com/y1', 'Yo one', '2019-01-02 03:04:05', '127.0.0.1', '5'],
      ['ab', 'https://example.com/short', 'Too short a keyword', '2019-01-02 03:04:05', '127.0.0.1', '0'],
    ]);
    const done = await importFile(user.token, { format: 'yourls' }, file);
    expect(done).toMatchObject({ created: 1, refused: 1 });
    expect((await reportOf(user.token, done.id, 'outcome=refused')).rows[0]).toMatchObject({ line: 3, errors: [{ field: 'keyword' }] });
    expect(await linkAt(user.token, 'yo1')).toMatchObject({ title: 'Yo one', createdAt: '2019-01-02T03:04:05.000Z' });
  });

  it('reads a generic CSV through its column mapping, naming the column of a bad value', async () => {
    const user = await api.registerUser();
    const mapping = {
      code: 'Slug',
      defaultUrl: 'Destination',
      title: 'Name',
      tags: 'Labels',
      androidPackageName: 'Android app',
      androidUrl: 'Android link',
      iosBundleId: 'iOS app',
      iosFallbackUrl: 'iOS store',
      expirationDate: 'Ends',
    };
    const file = csv([
      ['Slug', 'Destination', 'Name', 'Labels', 'Android app', 'Android link', 'iOS app', 'iOS store', 'Ends', 'Ignored'],
      [
        'gen-one',
        'https://example.com/g1',
        'Generic one',
        'a;b',
        'com.example.app',
        'app://g1',
        'com.example.app',
        'https://apps.apple.com/app/id1',
        '2031-02-03',
        'x',
      ],
      ['gen-two', 'https://example.com/g2', 'Generic two', '', 'bad package', '', '', '', '', 'y'],
    ]);
    const done = await importFile(user.token, { format: 'generic', mapping }, file);
    expect(done).toMatchObject({ created: 1, refused: 1 });
    expect((await reportOf(user.token, done.id, 'outcome=refused')).rows[0]).toMatchObject({
      line: 3,
      code: 'gen-two',
      errors: [{ field: 'Android app', message: expect.stringMatching(/package name/) }],
    });
    expect(await linkAt(user.token, 'gen-one')).toMatchObject({
      tags: ['a', 'b'],
      androidLink: { url: 'app://g1', appPackageName: 'com.example.app' },
      iosLink: { url: 'https://example.com/g1', bundleId: 'com.example.app', fallbackUrl: 'https://apps.apple.com/app/id1' },
      expirationDate: '2031-02-03T00:00:00.000Z',
    });

    const wrong = await createImport(user.token, { format: 'generic', mapping: { code: 'Code', defaultUrl: 'Destination' } });
    const response = await sendFile(user.token, wrong.id, file);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details).toEqual([{ field: 'mapping.code', message: 'names a column the file lacks: Code' }]);
  });
});

describe('the import routes', () => {
  it('check the options, the domain and the owner', async () => {
    const user = await api.registerUser();
    const other = await api.registerUser();
    const bad = (payload: object) => api.request({ method: 'POST', url: '/api/imports', token: user.token, payload });
    expect((await bad({ format: 'excel' })).json().error.details[0].field).toBe('format');
    expect((await bad({ format: 'generic' })).json().error.details).toEqual([
      { field: 'mapping', message: 'is required for the generic format' },
    ]);
    expect((await bad({ format: 'bitly', mapping: { code: 'a', defaultUrl: 'b' } })).json().error.details[0].field).toBe('mapping');
    expect((await bad({ format: 'generic', mapping: { code: 'a' } })).json().error.details[0].field).toBe('mapping.defaultUrl');
    expect((await bad({ format: 'takeout', domain: 'go.not-mine.test' })).json().error.details).toEqual([
      { field: 'domain', message: 'is not an active domain of yours' },
    ]);

    const mine = await createImport(user.token, { format: 'yourls' });
    const theirs = await api.request({ method: 'GET', url: `/api/imports/${mine.id}`, token: other.token });
    expect(theirs.statusCode).toBe(403);
    expect((await sendFile(other.token, mine.id, 'keyword,url\n')).statusCode).toBe(403);
    expect((await api.request({ method: 'GET', url: `/api/imports/${mine.id}/rows`, token: other.token })).statusCode).toBe(403);
    expect((await api.request({ method: 'GET', url: `/api/imports/${mine.id}` })).statusCode).toBe(401);
    const plain = await api.request({
      method: 'PUT',
      url: `/api/imports/${mine.id}/file`,
      token: user.token,
      headers: { 'content-type': 'text/plain' },
      payload: 'keyword,url\n',
    });
    expect(plain.statusCode).toBe(415);

    expect((await sendFile(user.token, mine.id, 'keyword,url\nyrl1,https://example.com/\n')).statusCode).toBe(200);
    const twice = await sendFile(user.token, mine.id, 'keyword,url\n');
    expect(twice.statusCode).toBe(409);
  });

  it('run one import per account at a time', async () => {
    const user = await api.registerUser();
    const first = await createImport(user.token, { format: 'yourls' });
    const second = await createImport(user.token, { format: 'yourls' });
    const upload = new PassThrough();
    upload.write('keyword,url\nslow1,https://example.com/1\n');
    const running = sendFile(user.token, first.id, upload);
    // The first holds the account's place until its upload ends.
    for (let i = 0; i < 50; i++) {
      const state = (await api.request({ method: 'GET', url: `/api/imports/${first.id}`, token: user.token })).json().data.import;
      if (state.status === 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const refused = await sendFile(user.token, second.id, 'keyword,url\nslow2,https://example.com/2\n');
    expect(refused.statusCode).toBe(429);
    upload.end('slow3,https://example.com/3\n');
    expect((await running).json().data.import).toMatchObject({ status: 'done', created: 2 });
    expect((await sendFile(user.token, second.id, 'keyword,url\nslow2,https://example.com/2\n')).statusCode).toBe(200);
  });

  it('across API processes too, until a running import of a process that died gives its place up', async () => {
    const user = await api.registerUser();
    const sibling = await api.sibling();
    try {
      const stuck = await createImport(user.token, { format: 'yourls' });
      // An import left running by a process that ended: it holds the account's place in the database.
      await api.env.sql`UPDATE link_imports SET status = 'running' WHERE id = ${stuck.id}`;
      const next = await createImport(user.token, { format: 'yourls' });
      const send = (harness: typeof api) =>
        harness.request({
          method: 'PUT',
          url: `/api/imports/${next.id}/file`,
          token: user.token,
          headers: { 'content-type': 'text/csv' },
          payload: 'keyword,url\nsib1,https://example.com/1\n',
        });
      const refused = await send(sibling);
      expect(refused.statusCode).toBe(409);
      expect(refused.json().error.message).toMatch(/Another import of this account is running/);
      // Its batches stopped more than 2 minutes ago: it is failed, and the next one runs.
      await api.env.sql`UPDATE link_imports SET progressed_at = now() - interval '3 minutes' WHERE id = ${stuck.id}`;
      expect((await send(sibling)).json().data.import).toMatchObject({ status: 'done', created: 1 });
      const abandoned = (await api.request({ method: 'GET', url: `/api/imports/${stuck.id}`, token: user.token })).json().data.import;
      expect(abandoned).toMatchObject({ status: 'failed', error: { message: 'stopped: the process running it ended' } });
    } finally {
      await sibling.close();
    }
  });
});
