import { describe, expect, it } from 'vitest';
import { NEXT_RELEASE_FORMATS, PACKED_2 } from '@deeplink/test-kit/next-batch-format';
import { CLICK_BATCH_FORMATS, clickBatchFormats, readClickJob, readClickJobData, scrubClickJob } from '../src/queue/batch-formats.js';
import { PACKED_1, PACKED_FORMAT, PackedClickBatchBuilder, packClickBatch, type ClickEvent } from '../src/queue/clicks.js';

const clicks: ClickEvent[] = [
  { linkId: 'link-a', ts: 1_700_000_000_000, ip: '203.0.113.7', userAgent: 'agent', referrer: '' },
  { linkId: 'link-b', ts: 1_700_000_000_500, ip: '203.0.113.8', userAgent: 'agent', referrer: 'https://news.example/' },
];
const asStored = (data: unknown) => JSON.parse(JSON.stringify(data)) as unknown;

describe('click batch formats', () => {
  it('names the format the redirector writes as this release’s current one, and reads it', () => {
    const builder = new PackedClickBatchBuilder();
    builder.add(clicks[0]!);
    const written = builder.build('b');
    expect(written.format).toBe(CLICK_BATCH_FORMATS.current.name);
    expect([...CLICK_BATCH_FORMATS.readable.keys()]).toEqual([PACKED_FORMAT]);
    expect(readClickJob(asStored(written))).toEqual({ batchId: 'b', clicks: [clicks[0]] });
  });

  it('reads each format with its own reader, and the previous format after a change', () => {
    const old = asStored(packClickBatch({ batchId: 'old', clicks }));
    const next = asStored(PACKED_2.write({ batchId: 'next', clicks }));
    expect(next).toMatchObject({ format: 'packed-2', appEvents: [] });
    expect(readClickJob(old, NEXT_RELEASE_FORMATS)).toEqual({ batchId: 'old', clicks });
    expect(readClickJob(next, NEXT_RELEASE_FORMATS)).toEqual({ batchId: 'next', clicks });
    // This release knows no packed-2: such a batch is poison to it.
    expect(readClickJob(next)).toBeUndefined();
  });

  it('says why data cannot be read: no format, an unknown one (named), or a malformed batch of a known one', () => {
    expect(readClickJobData({ batchId: 'x', clicks })).toEqual({ problem: 'job data is not a click batch' });
    expect(readClickJobData('text')).toEqual({ problem: 'job data is not a click batch' });
    expect(readClickJobData({ format: 'packed-9', batchId: 'x' })).toEqual({ problem: 'unknown click batch format "packed-9"' });
    expect(readClickJobData({ format: 'a"b\n'.repeat(20), batchId: 'x' })).toEqual({
      problem: `unknown click batch format ${JSON.stringify('a"b\n'.repeat(10))}`,
    });
    const cut = { ...packClickBatch({ batchId: 'x', clicks }), clicks: [0, 0] };
    expect(readClickJobData(cut)).toEqual({ problem: 'job data is not a whole "packed-1" click batch' });
    // A packed-2 batch without what packed-2 adds is malformed, not read as packed-1.
    const { appEvents: _, ...withoutEvents } = PACKED_2.write({ batchId: 'x', clicks }) as unknown as Record<string, unknown>;
    expect(readClickJobData(withoutEvents, NEXT_RELEASE_FORMATS)).toEqual({ problem: 'job data is not a whole "packed-2" click batch' });
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
    expect(scrubClickJob(asStored(PACKED_2.write({ batchId: 'kept', clicks })))).toEqual({ scrubbed: 'unreadable batch data removed' });
  });

  it('lists the current format first and each format once', () => {
    const formats = clickBatchFormats(PACKED_2, PACKED_1);
    expect(formats.current).toBe(PACKED_2);
    expect([...formats.readable.keys()]).toEqual(['packed-2', 'packed-1']);
  });
});
