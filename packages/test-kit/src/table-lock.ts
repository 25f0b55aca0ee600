import type { Sql } from '@deeplink/core/db';

/**
 * Takes a lock on `table` that blocks writes to it, in a transaction of its own, until `release()`:
 * a way to keep the worker's rollup writes waiting, so batches are certainly in flight.
 */
export async function holdTableLock(sql: Sql, table: string): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const lockTaken = new Promise<void>((resolve) => (locked = resolve));
  const holder = sql.begin(async (tx) => {
    await tx`LOCK TABLE ${tx(table)} IN SHARE ROW EXCLUSIVE MODE`;
    locked();
    await released;
  });
  await lockTaken;
  return {
    async release() {
      release();
      await holder;
    },
  };
}
