import { describe, expect, it } from 'vitest';
import { NEXT_RELEASE_FORMATS, PACKED_3 } from '@deeplink/test-kit/next-batch-format';
import { CLICK_BATCH_FORMATS, clickBatchFormats, readClickJob, readClickJobData, scrubClickJob } from '../src/queue/batch-formats.js';
import type { AppEvent } from '../src/queue/app-events.js';
import { PACKED_1, PACKED_2, PACKED_FORMAT, PackedClickBatchBuilder, packClickBatch, type ClickEvent } from '../src/queue/clicks.js';

const clicks: ClickEvent[] = [
  { linkId: 'link-a', ts: 1_700_000_000_000, ip: '203.0.113.7', userAgent: 'agent', referrer: '' },
  { linkId: 'link-b', ts: 1_700_000_000_500, ip: '203.0.113.8', userAgent: 'agent', referrer: 'https://news.example/' },
];
const opens: AppEvent[] = [{ eventId: 'open-1', name: 'APP_FIRST_OPEN', platform: 'IOS', linkId: 'link-a', ts: 1_700_000_001_000 }];
const asStored = (data: unknown) => JSON.parse(JSON.stringify(data)) as unknown;

describe('click batch formats', () => {
  it('packs a click sent to a store with its REDIRECT, whose id follows from the batch id and the click', () => {
    const builder = new PackedClickBatchBuilder();
    builder.add(clicks[0]!);
    builder.add(clicks[1]!, 'ANDROID');
    builder.addEvent(opens[0]!);
    const batch = asStored(builder.build('batch-7'));
    const redirect = { eventId: 'batch-7:1', name: 'REDIRECT', platform: 'ANDROID', linkId: 'link-b', ts: clicks[1]!.ts, clickIndex: 1 };
    expect(readClickJob(batch)).toEqual({ batchId: 'batch-7', clicks, appEvents: [redirect, opens[0]] });
    // Read again (a replay), the same ids.
    expect(readClickJob(batch)?.appEvents?.map((event) => event.eventId)).toEqual(['batch-7:1', 'open-1']);
  });

  it('writes a batch back (addresses hashed) with its store REDIRECTs still its clicks’ events, install fields included', () => {
    const builder = new PackedClickBatchBuilder();
    builder.add(clicks[0]!);
    builder.add(clicks[1]!, 'ANDROID', { token: 'T'.repeat(22), language: 'fr' });
    builder.addEvent(opens[0]!);
    const stored = asStored(builder.build('batch-8'));
    const read = readClickJob(stored)!;
    expect(read.appEvents![0]).toEqual({
      eventId: 'batch-8:1',
      name: 'REDIRECT',
      platform: 'ANDROID',
      linkId: 'link-b',
      ts: clicks[1]!.ts,
      install: { token: 'T'.repeat(22), language: 'fr' },
      clickIndex: 1,
    });
    const scrubbed = scrubClickJob(stored);
    expect(JSON.stringify(scrubbed)).not.toContain('203.0.113');
    expect(readClickJob(scrubbed)!.appEvents).toEqual(read.appEvents);
  });

  it('carries the visitor an event names, once for the events sharing it, and none for a store REDIRECT', () => {
    const visitor = 'k3Q9xV2bT0cL7nR1pYsA4dE6fG8hJ5mN0oP2qW4eR6t';
    const install: AppEvent[] = [
      { eventId: 'install-1', name: 'APP_INSTALL', platform: 'ANDROID', linkId: 'link-a', ts: 1_700_000_002_000, visitor },
      { eventId: 'first-open-1', name: 'APP_FIRST_OPEN', platform: 'ANDROID', linkId: 'link-a', ts: 1_700_000_002_000, visitor },
    ];
    const builder = new PackedClickBatchBuilder();
    builder.add(clicks[0]!, 'ANDROID', { token: 'T'.repeat(22) });
    for (const event of [...install, ...opens]) builder.addEvent(event);
    const packed = builder.build('batch-9');
    // Nine numbers per event; the shared visitor is one string of the batch.
    expect(packed.events).toHaveLength(4 * 9);
    expect(packed.strings.filter((s) => s === visitor)).toHaveLength(1);
    const read = readClickJob(asStored(packed))!;
    expect(read.appEvents).toEqual([
      {
        eventId: 'batch-9:0',
        name: 'REDIRECT',
        platform: 'ANDROID',
        linkId: 'link-a',
        ts: clicks[0]!.ts,
        clickIndex: 0,
        install: { token: 'T'.repeat(22) },
      },
      ...install,
      ...opens,
    ]);
    expect(read.appEvents![0]).not.toHaveProperty('visitor');
    expect(read.appEvents![3]).not.toHaveProperty('visitor');
  });

  it('packs an open alone: a batch with no clicks', () => {
    const batch = asStored(packClickBatch({ batchId: 'open', clicks: [], appEvents: opens }));
    expect(readClickJob(batch)).toEqual({ batchId: 'open', clicks: [], appEvents: opens });
  });

  it('names the format the redirector writes as this release’s current one, and reads it', () => {
    const builder = new PackedClickBatchBuilder();
    builder.add(clicks[0]!);
    const written = builder.build('b');
    expect(written.format).toBe(CLICK_BATCH_FORMATS.current.name);
    expect(written.format).toBe('packed-2');
    // packed-1, which the previous release wrote, stays readable.
    expect([...CLICK_BATCH_FORMATS.readable.keys()]).toEqual([PACKED_FORMAT, 'packed-1']);
    expect(readClickJob(asStored(written))).toEqual({ batchId: 'b', clicks: [clicks[0]] });
  });

  it('reads a packed-1 batch of the previous release: its clicks, no app events', () => {
    const old = asStored(PACKED_1.write({ batchId: 'old', clicks, appEvents: opens }));
    expect(old).toMatchObject({ format: 'packed-1' });
    expect(old).not.toHaveProperty('events');
    expect(readClickJob(old)).toEqual({ batchId: 'old', clicks });
  });

  it('reads each format with its own reader, and the previous formats after a change', () => {
    const old = asStored(PACKED_1.write({ batchId: 'old', clicks }));
    const current = asStored(packClickBatch({ batchId: 'current', clicks, appEvents: opens }));
    const next = asStored(PACKED_3.write({ batchId: 'next', clicks, appEvents: opens }));
    expect(next).toMatchObject({ format: 'packed-3', installTokens: [] });
    expect(readClickJob(old, NEXT_RELEASE_FORMATS)).toEqual({ batchId: 'old', clicks });
    expect(readClickJob(current, NEXT_RELEASE_FORMATS)).toEqual({ batchId: 'current', clicks, appEvents: opens });
    expect(readClickJob(next, NEXT_RELEASE_FORMATS)).toEqual({ batchId: 'next', clicks, appEvents: opens });
    // This release knows no packed-3: such a batch is poison to it.
    expect(readClickJob(next)).toBeUndefined();
  });

  it('says why data cannot be read: no format, an unknown one (named), or a malformed batch of a known one', () => {
    expect(readClickJobData({ batchId: 'x', clicks })).toEqual({ problem: 'job data is not a click batch' });
    expect(readClickJobData('text')).toEqual({ problem: 'job data is not a click batch' });
    expect(readClickJobData({ format: 'packed-9', batchId: 'x' })).toEqual({ problem: 'unknown click batch format "packed-9"' });
    expect(readClickJobData({ format: 'a"b\n'.repeat(20), batchId: 'x' })).toEqual({
      problem: `unknown click batch format ${JSON.stringify('a"b\n'.repeat(10))}`,
    });
    const cut = { ...PACKED_1.write({ batchId: 'x', clicks }), clicks: [0, 0] };
    expect(readClickJobData(cut)).toEqual({ problem: 'job data is not a whole "packed-1" click batch' });
    // A packed-2 batch without what packed-2 adds is malformed, not read as packed-1.
    const { events: _, ...withoutEvents } = packClickBatch({ batchId: 'x', clicks });
    expect(readClickJobData(withoutEvents)).toEqual({ problem: 'job data is not a whole "packed-2" click batch' });
    // …and so is one whose event names no known event, or a click the batch does not hold.
    const packed = packClickBatch({ batchId: 'x', clicks, appEvents: opens });
    const badName = { ...packed, strings: packed.strings.map((s) => (s === 'APP_FIRST_OPEN' ? 'APP_LAUNCH' : s)) };
    expect(readClickJobData(badName)).toEqual({ problem: 'job data is not a whole "packed-2" click batch' });
    const strayClick = { ...packed, events: [...packed.events.slice(0, 4), -1, 7, -1, -1, -1] };
    expect(readClickJobData(strayClick)).toEqual({ problem: 'job data is not a whole "packed-2" click batch' });
  });

  it('scrubs a batch of every readable format, keeping its format', () => {
    for (const format of NEXT_RELEASE_FORMATS.readable.values()) {
      const scrubbed = scrubClickJob(asStored(format.write({ batchId: 'kept', clicks })), NEXT_RELEASE_FORMATS);
      expect(scrubbed).toMatchObject({ format: format.name, batchId: 'kept' });
      expect(JSON.stringify(scrubbed)).not.toContain('203.0.113');
      const read = readClickJob(scrubbed, NEXT_RELEASE_FORMATS)!;
      expect(read.clicks.map((click) => click.ip)).toEqual([expect.stringMatching(/^sha256:/), expect.stringMatching(/^sha256:/)]);
    }
    // Unknown to the registry: replaced whole.
    expect(scrubClickJob(asStored(PACKED_3.write({ batchId: 'kept', clicks })))).toEqual({ scrubbed: 'unreadable batch data removed' });
  });

  it('lists the current format first and each format once', () => {
    const formats = clickBatchFormats(PACKED_3, PACKED_2, PACKED_1);
    expect(formats.current).toBe(PACKED_3);
    expect([...formats.readable.keys()]).toEqual(['packed-3', 'packed-2', 'packed-1']);
  });
});
