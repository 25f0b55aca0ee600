/** The BullMQ queue between the redirector and the worker. */
export const CLICK_QUEUE = 'clicks';
export const CLICK_BATCH_JOB = 'batch';

/** One visit as the redirector saw it. The worker derives everything else from these fields. */
export interface ClickEvent {
  linkId: string;
  /** Epoch milliseconds when the redirect was answered. */
  ts: number;
  /** Client address; used only to derive country and the visitor hash, never stored. */
  ip: string;
  userAgent: string;
  /** Referer header, or '' for a direct visit. */
  referrer: string;
}

/** One job: a batch of clicks with an id that makes its rollup idempotent. */
export interface ClickBatch {
  batchId: string;
  clicks: ClickEvent[];
}
