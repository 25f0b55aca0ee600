// A click batch format that does not exist yet, for upgrade tests: `packed-2` is `packed-1` with one
// more field, as the next real format (clicks beside app events and install tokens) will be. A
// worker built with NEXT_RELEASE_FORMATS writes it and still reads what this release writes.
import {
  type ClickBatch,
  type ClickBatchFormat,
  type ClickJobData,
  clickBatchFormats,
  PACKED_1,
  packClickBatch,
  type PackedClickBatch,
} from '@deeplink/core';

/** packed-2: a packed-1 batch, renamed, with the app events a later release adds (none here). */
export interface NextFormatBatch extends Omit<PackedClickBatch, 'format'> {
  format: 'packed-2';
  appEvents: unknown[];
}

export const PACKED_2: ClickBatchFormat = {
  name: 'packed-2',
  read(data) {
    // packed-1's reader does the clicks; what packed-2 adds must be there too.
    if (!Array.isArray(data.appEvents)) return undefined;
    return PACKED_1.read({ ...data, format: PACKED_1.name });
  },
  write(batch: ClickBatch): ClickJobData {
    const next: NextFormatBatch = { ...packClickBatch(batch), format: 'packed-2', appEvents: [] };
    return next;
  },
};

/** The next release's registry: it writes packed-2 and keeps reading packed-1, as the upgrade policy says. */
export const NEXT_RELEASE_FORMATS = clickBatchFormats(PACKED_2, PACKED_1);
