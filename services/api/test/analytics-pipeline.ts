import type { ClickEvent } from '@deeplink/core';
import { BROWSER_AGENTS, UA } from '../../../test/support/user-agents.js';

export { BROWSER_AGENTS };
export const ANDROID_CHROME = UA.androidChrome;
export const GOOGLEBOT = UA.googlebot;

/** A click on `linkId` at `ts` (epoch ms or ISO string), from a desktop Chrome visitor unless overridden. */
export const click = (linkId: string, ts: number | string, overrides: Partial<ClickEvent> = {}): ClickEvent => ({
  linkId,
  ts: typeof ts === 'number' ? ts : Date.parse(ts),
  ip: '8.8.8.8',
  userAgent: BROWSER_AGENTS.Chrome,
  referrer: '',
  ...overrides,
});

export { createClickPipeline } from '../../../test/support/click-pipeline.js';
