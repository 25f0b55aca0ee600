import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountLoss, emptyTally, sendLossTraffic, tallyVisit } from '../src/measure/loss.js';
import { AGENT_MIX } from '../src/user-agents.js';
import { createVisitor } from '../src/visitor.js';

describe('loss accounting', () => {
  it('expects one click per human visit answered with a 302 or the app page, none for bots', () => {
    const tally = emptyTally();
    tallyVisit(tally, false, 302);
    tallyVisit(tally, false, 200); // iOS app page: a click too
    tallyVisit(tally, true, 302); // bot: answered, not counted
    tallyVisit(tally, false, 503); // failed visit: no click recorded
    tallyVisit(tally, false, 404);
    expect(tally).toEqual({
      requests: 5,
      botRequests: 1,
      humanAnswered: 2,
      botAnswered: 1,
      statuses: { 200: 1, 302: 2, 404: 1, 503: 1 },
    });
    expect(accountLoss(tally, 2)).toEqual({ expected: 2, reported: 2, loss: 0 });
  });

  it('reports lost clicks as positive loss and double counts as negative', () => {
    const tally = emptyTally();
    for (let i = 0; i < 10; i++) tallyVisit(tally, false, 302);
    expect(accountLoss(tally, 7).loss).toBe(3);
    expect(accountLoss(tally, 12).loss).toBe(-2);
  });
});

describe('sendLossTraffic', () => {
  const botAgents = new Set(AGENT_MIX.filter((a) => a.bot).map((a) => a.userAgent));
  const received = { human: 0, bot: 0, paths: new Set<string>() };
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      if (botAgents.has(request.headers['user-agent'] ?? '')) received.bot++;
      else received.human++;
      received.paths.add(request.url ?? '');
      response.writeHead(302, { location: 'https://example.com/' }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => server.close());

  it('sends exactly the number asked, spreads them over the links, and tallies what the server saw', async () => {
    const visitor = createVisitor(url, 4);
    const links = [
      { id: 'a', code: 'aaa' },
      { id: 'b', code: 'bbb' },
      { id: 'c', code: 'ccc' },
    ];
    const tally = await sendLossTraffic(visitor, links, 600, 8);
    visitor.close();
    expect(tally.requests).toBe(600);
    expect(tally.statuses).toEqual({ 302: 600 });
    expect(tally.botRequests).toBe(received.bot);
    expect(tally.humanAnswered).toBe(received.human);
    // The mix has about 12 % bots; a seeded generator makes the share exact run to run.
    expect(tally.botRequests).toBeGreaterThan(30);
    expect(tally.botRequests).toBeLessThan(130);
    expect([...received.paths].sort()).toEqual(['/aaa', '/bbb', '/ccc']);
  });
});
