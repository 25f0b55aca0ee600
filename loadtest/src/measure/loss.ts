import type { SeededLink } from '../seed.js';
import { AGENT_MIX, pickAgent, seededRandom } from '../user-agents.js';
import type { Visitor } from '../visitor.js';

/** What the loss traffic sent and got back, counted one response at a time. */
export interface LossTally {
  requests: number;
  botRequests: number;
  /** Human visits answered with a redirect (302) or the iOS app page (200): each must become one click. */
  humanAnswered: number;
  /** Bot visits answered the same way: the worker must drop them. */
  botAnswered: number;
  /** Every status seen, for the record (anything but 302/200 is a failed visit, not a click). */
  statuses: Record<string, number>;
}

/** The loss figure: clicks the redirector answered for humans against clicks the analytics API reports. */
export interface LossAccount {
  expected: number;
  reported: number;
  /** expected − reported: positive means clicks lost, negative means clicks counted twice. */
  loss: number;
}

/** An empty tally. */
export const emptyTally = (): LossTally => ({ requests: 0, botRequests: 0, humanAnswered: 0, botAnswered: 0, statuses: {} });

/** Both answers that record a click: the 302 and the iOS "open the app" page. */
const recordsClick = (status: number) => status === 302 || status === 200;

/** Adds one answered visit to the tally. */
export function tallyVisit(tally: LossTally, bot: boolean, status: number): void {
  tally.requests++;
  if (bot) tally.botRequests++;
  tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
  if (recordsClick(status)) {
    if (bot) tally.botAnswered++;
    else tally.humanAnswered++;
  }
}

/** Compares what was sent with what analytics reports; bots are not expected in the counts. */
export function accountLoss(tally: LossTally, reported: number): LossAccount {
  return { expected: tally.humanAnswered, reported, loss: tally.humanAnswered - reported };
}

/**
 * Sends exactly `requests` redirects over `links` with the weighted agent mix (bots included),
 * `concurrency` at a time, awaiting every answer, so the tally is exact.
 */
export async function sendLossTraffic(
  visitor: Visitor,
  links: readonly SeededLink[],
  requests: number,
  concurrency = 16,
): Promise<LossTally> {
  const tally = emptyTally();
  const random = seededRandom(20_240_601);
  let next = 0;
  const lane = async () => {
    for (let n = next++; n < requests; n = next++) {
      const link = links[n % links.length]!;
      const agent = pickAgent(AGENT_MIX, random());
      tallyVisit(tally, agent.bot, await visitor.visit(`/${link.code}`, agent.userAgent));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, requests) }, lane));
  return tally;
}
