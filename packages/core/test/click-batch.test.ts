import { describe, expect, it } from 'vitest';
import { UA } from '@deeplink/test-kit/user-agents';
import { readClickJob, scrubClickJob } from '../src/queue/batch-formats.js';
import { PACKED_FORMAT, PackedClickBatchBuilder, packClickBatch, type ClickEvent, type PackedClickBatch } from '../src/queue/clicks.js';

const LINK_A = '0b8f3c1e-0000-4000-8000-00000000000a';
const LINK_B = '0b8f3c1e-0000-4000-8000-00000000000b';
const AGENT = UA.iphoneSafari;

const clicks: ClickEvent[] = [
  { linkId: LINK_A, ts: 1_700_000_000_000, ip: '203.0.113.7', userAgent: AGENT, referrer: 'https://news.example/' },
  { linkId: LINK_A, ts: 1_700_000_000_250, ip: '203.0.113.8', userAgent: AGENT, referrer: '' },
  { linkId: LINK_B, ts: 1_699_999_999_000, ip: '203.0.113.7', userAgent: 'curl/8.5', referrer: '' },
];

describe('packed click batches', () => {
  it('round-trips clicks through JSON, in order, with every field', () => {
    const packed = packClickBatch({ batchId: 'b1', clicks });
    const read = readClickJob(JSON.parse(JSON.stringify(packed)));
    expect(read).toEqual({ batchId: 'b1', clicks });
  });

  it('round-trips store REDIRECT events with their install token and language, and events without either', () => {
    const builder = new PackedClickBatchBuilder();
    builder.add(clicks[0]!, 'ANDROID', { token: 'tok-android-0000000000', language: 'fr' });
    builder.add(clicks[1]!, 'IOS', { token: 'tok-ios-00000000000000' });
    builder.add(clicks[2]!, 'DESKTOP');
    const read = readClickJob(JSON.parse(JSON.stringify(builder.build('b2'))))!;
    expect(read.clicks).toEqual(clicks);
    expect(read.appEvents).toEqual([
      {
        eventId: 'b2:0',
        name: 'REDIRECT',
        platform: 'ANDROID',
        linkId: LINK_A,
        ts: clicks[0]!.ts,
        install: { token: 'tok-android-0000000000', language: 'fr' },
        clickIndex: 0,
      },
      {
        eventId: 'b2:1',
        name: 'REDIRECT',
        platform: 'IOS',
        linkId: LINK_A,
        ts: clicks[1]!.ts,
        install: { token: 'tok-ios-00000000000000' },
        clickIndex: 1,
      },
      { eventId: 'b2:2', name: 'REDIRECT', platform: 'DESKTOP', linkId: LINK_B, ts: clicks[2]!.ts, clickIndex: 2 },
    ]);
  });

  it('writes each distinct string once and five numbers per click', () => {
    const packed = packClickBatch({ batchId: 'b1', clicks });
    expect(packed.format).toBe(PACKED_FORMAT);
    expect(packed.strings.sort()).toEqual(
      [LINK_A, LINK_B, '203.0.113.7', '203.0.113.8', AGENT, 'curl/8.5', 'https://news.example/', ''].sort(),
    );
    expect(packed.clicks).toHaveLength(15);
    // Times are offsets from the first click, so they may be negative but stay small.
    expect(packed.since).toBe(clicks[0]!.ts);
    expect([packed.clicks[0], packed.clicks[5], packed.clicks[10]]).toEqual([0, 250, -1000]);
  });

  it('round-trips runs of repeated and alternating values, a value shared across fields included', () => {
    const pick = <T>(pool: T[], i: number, stride: number) => pool[Math.floor(i / stride) % pool.length]!;
    const mixed: ClickEvent[] = Array.from({ length: 200 }, (_, i) => ({
      linkId: pick([LINK_A, LINK_B], i, 7),
      ts: 1_700_000_000_000 + i,
      ip: pick(['203.0.113.7', '', '203.0.113.8'], i, 3),
      userAgent: pick([AGENT, 'curl/8.5'], i, 1),
      referrer: pick(['', 'https://news.example/', '203.0.113.7'], i, 5),
    }));
    const packed = packClickBatch({ batchId: 'mixed', clicks: mixed });
    expect(readClickJob(JSON.parse(JSON.stringify(packed)))).toEqual({ batchId: 'mixed', clicks: mixed });
    expect(new Set(packed.strings).size).toBe(packed.strings.length);
  });

  it('is several times smaller than the same clicks as objects for a link with repeated visitors', () => {
    const many = Array.from({ length: 500 }, (_, i) => ({ ...clicks[i % 2]!, ts: clicks[0]!.ts + i }));
    const objects = JSON.stringify({ batchId: 'b', clicks: many }).length;
    const packed = JSON.stringify(packClickBatch({ batchId: 'b', clicks: many })).length;
    expect(packed * 4).toBeLessThan(objects);
  });

  it('counts clicks and starts empty', () => {
    const builder = new PackedClickBatchBuilder();
    expect(builder.size).toBe(0);
    expect(builder.build('empty')).toMatchObject({ strings: [], clicks: [] });
    builder.add({ linkId: LINK_A, ts: 5, ip: '::1', userAgent: AGENT, referrer: '' });
    expect(builder.size).toBe(1);
    expect(readClickJob(builder.build('one'))?.clicks).toEqual([{ linkId: LINK_A, ts: 5, ip: '::1', userAgent: AGENT, referrer: '' }]);
  });

  it('replaces the addresses of a batch kept for inspection with hashes, and any other data whole', () => {
    const scrubbed = scrubClickJob(JSON.parse(JSON.stringify(packClickBatch({ batchId: 'kept', clicks }))));
    const read = readClickJob(scrubbed)!;
    const [first, second, third] = read.clicks.map(({ ip }) => ip);
    expect(first).toMatch(/^sha256:[0-9a-f]{16}$/);
    // The same address gives the same hash: visitors can still be told apart.
    expect(third).toBe(first);
    expect(second).not.toBe(first);
    expect(read.clicks.map(({ ip: _ip, ...rest }) => rest)).toEqual(clicks.map(({ ip: _ip, ...rest }) => rest));
    expect(JSON.stringify(scrubbed)).not.toContain('203.0.113');
    for (const other of [{ batchId: 'objects', clicks }, { ip: '203.0.113.7' }, 'text']) {
      expect(scrubClickJob(other)).toEqual({ scrubbed: 'unreadable batch data removed' });
    }
  });

  describe('rejects data that is not a packed batch', () => {
    const good = packClickBatch({ batchId: 'b', clicks });
    const cases: [string, unknown][] = [
      ['not an object', 'clicks'],
      ['no batch id', { ...good, batchId: undefined }],
      ['clicks as objects, unpacked', { batchId: 'b', clicks }],
      ['no format', { ...good, format: undefined }],
      ['an unknown format', { ...good, format: 'packed-9' }],
      ['a non-numeric since', { ...good, since: '0' }],
      ['strings that are not strings', { ...good, strings: [1] }],
      ['a click cut short', { ...good, clicks: good.clicks.slice(0, 7) }],
      ['an index past the strings', { ...good, clicks: [0, 0, 0, 0, 99] }],
      ['a fractional index', { ...good, clicks: [0, 0.5, 0, 0, 0] }],
      ['a negative index', { ...good, clicks: [0, -1, 0, 0, 0] }],
      ['a time offset that is not a number', { ...good, clicks: [null, 0, 0, 0, 0] }],
    ];
    it.each(cases)('%s', (_, data) => {
      expect(readClickJob(data as PackedClickBatch)).toBeUndefined();
    });
  });
});
