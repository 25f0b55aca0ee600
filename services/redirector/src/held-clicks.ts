import { randomUUID } from 'node:crypto';
import {
  type AppEventPlatform,
  type ClickEvent,
  type InstallClick,
  PACKED_FIELDS,
  type PackedClickBatch,
  PackedClickBatchBuilder,
} from '@deeplink/core';

/** Clicks in a batch of the format the redirector writes (packed-2, this release's current format). */
const clicksOf = (batch: PackedClickBatch): number => batch.clicks.length / PACKED_FIELDS;

/**
 * The clicks in memory: the batch filling now, and the sealed batches that wait for the queue or the
 * spool, oldest first. Owns the count of both, which CLICK_BUFFER_MAX bounds.
 */
export function createHeldClicks(batchSize: number) {
  let filling = new PackedClickBatchBuilder();
  const sealed: PackedClickBatch[] = [];
  let size = 0;

  /** Closes the filling batch (if it holds anything), so that it waits in line to be sent. */
  function seal(): void {
    if (filling.size === 0) return;
    sealed.push(filling.build(randomUUID()));
    filling = new PackedClickBatchBuilder();
  }

  return {
    /** Clicks in memory, filling and sealed. */
    size: () => size,

    /**
     * Adds a click to the filling batch, with a REDIRECT event when it was sent to an app store (and
     * the install token it handed out); true when that filled it, and it was sealed.
     */
    add(click: ClickEvent, redirectedTo?: AppEventPlatform, install?: InstallClick): boolean {
      filling.add(click, redirectedTo, install);
      size++;
      if (filling.size < batchSize) return false;
      seal();
      return true;
    },

    seal,

    /** The oldest sealed batch, which goes next; undefined when none waits. */
    oldest: (): PackedClickBatch | undefined => sealed[0],

    /**
     * Hands the newest sealed batch to `take` (the spool), unless only `keep` batches wait: the
     * oldest may be on its way to the queue. Returns the clicks let go, 0 when none were.
     */
    spillNewest(keep: number, take: (batch: PackedClickBatch) => boolean): number {
      const batch = sealed.length > keep ? sealed.at(-1)! : undefined;
      if (!batch || !take(batch)) return 0;
      sealed.pop();
      const count = clicksOf(batch);
      size -= count;
      return count;
    },

    /** Lets the oldest sealed batch go, once the queue or the spool has it; returns its clicks. */
    release(): number {
      const count = clicksOf(sealed.shift()!);
      size -= count;
      return count;
    },
  };
}

export type HeldClicks = ReturnType<typeof createHeldClicks>;
