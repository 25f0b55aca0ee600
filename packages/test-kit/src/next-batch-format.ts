// A click batch format that does not exist yet, for upgrade tests: `packed-3` is `packed-2` with one
// more field, as the next real format will be. A worker built with NEXT_RELEASE_FORMATS writes it
// and still reads what this release writes (packed-2) and what the one before wrote (packed-1).
import {
  type ClickBatch,
  type ClickBatchFormat,
  type ClickJobData,
  clickBatchFormats,
  PACKED_1,
  PACKED_2,
  packClickBatch,
  type PackedClickBatch,
} from '@deeplink/core';

/** packed-3: a packed-2 batch, renamed, with the install tokens a later release could add (none here). */
export interface NextFormatBatch extends Omit<PackedClickBatch, 'format'> {
  format: 'packed-3';
  installTokens: unknown[];
}

export const PACKED_3: ClickBatchFormat = {
  name: 'packed-3',
  read(data) {
    // packed-2's reader does the clicks and app events; what packed-3 adds must be there too.
    if (!Array.isArray(data.installTokens)) return undefined;
    return PACKED_2.read({ ...data, format: PACKED_2.name });
  },
  write(batch: ClickBatch): ClickJobData {
    const next: NextFormatBatch = { ...packClickBatch(batch), format: 'packed-3', installTokens: [] };
    return next;
  },
};

/** The next release's registry: it writes packed-3 and keeps reading packed-2 and packed-1, as the upgrade policy says. */
export const NEXT_RELEASE_FORMATS = clickBatchFormats(PACKED_3, PACKED_2, PACKED_1);
