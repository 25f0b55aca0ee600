import { useEffect, useRef, useState } from 'preact/hooks';
import { valueLabel } from '../lib/breakdowns.js';
import { ScrollTable } from './common.js';
import { followLiveStream, type LiveState } from '../lib/live-stream.js';
import { addMessage, currentRate, EMPTY_TALLY, type LiveTally } from '../lib/live-tally.js';
import { currentSession, signOut } from '../lib/session.js';

const numberFormat = new Intl.NumberFormat(undefined);
const rateFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });
const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });

/** Whether the page is on screen: the stream is read only then. */
function usePageVisible(): boolean {
  const [visible, setVisible] = useState(() => document.visibilityState !== 'hidden');
  useEffect(() => {
    const update = () => setVisible(document.visibilityState !== 'hidden');
    document.addEventListener('visibilitychange', update);
    return () => document.removeEventListener('visibilitychange', update);
  }, []);
  return visible;
}

/**
 * The live stream of `path` (under /api) while the page is shown: closed when the page is left
 * or hidden, and opened again with the last message's id when it is shown again, so the clicks
 * of the hidden time are still counted.
 */
function useLiveTally(path: string): { tally: LiveTally; state: LiveState } {
  const visible = usePageVisible();
  const [tally, setTally] = useState(EMPTY_TALLY);
  const [state, setState] = useState<LiveState>({ kind: 'connecting' });
  const lastEventId = useRef<string>();
  useEffect(() => {
    if (!visible) {
      setState({ kind: 'stopped', reason: 'Paused while the page is hidden.' });
      return;
    }
    const controller = new AbortController();
    void followLiveStream({
      url: `${location.origin}/api${path}`,
      token: () => currentSession()?.token,
      lastEventId: lastEventId.current,
      signal: controller.signal,
      onState: setState,
      onUnauthorized: signOut,
      onMessage: (message) => {
        lastEventId.current = message.id ?? lastEventId.current;
        setTally((before) => addMessage(before, message, Date.now()));
      },
    });
    return () => controller.abort();
  }, [path, visible]);
  return { tally, state };
}

/** Re-renders every `ms` while mounted: the rate falls to 0 when no batch comes. */
function useTick(ms: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

const STATE_TEXT: Record<LiveState['kind'], string> = {
  connecting: 'Connecting…',
  live: 'Live',
  waiting: 'Reconnecting…',
  stopped: 'Stopped',
};

/**
 * Clicks as they arrive, without a refresh: a running count since the page opened, the clicks per
 * second, and the last clicks. `scope` says whose clicks (a link's, or the whole account's). The
 * stream is never filtered: `filtered` adds a note saying so when the page is.
 */
export function LivePanel({ path, scope, filtered }: { path: string; scope: string; filtered: boolean }) {
  const { tally, state } = useLiveTally(path);
  const now = useTick(1000);
  return (
    <section class="card live" aria-labelledby="live-heading">
      <div class="card-head">
        <h2 id="live-heading">Live</h2>
        <span class={`live-state ${state.kind}`} data-testid="live-state">
          {STATE_TEXT[state.kind]}
        </span>
      </div>
      {(state.kind === 'waiting' || state.kind === 'stopped') && <p class="muted live-reason">{state.reason}</p>}
      {/* Polite: screen readers hear the count when they are idle, not on every batch mid-sentence. */}
      <dl class="live-figures" aria-live="polite" aria-atomic="true">
        <div>
          <dt>Clicks since you opened this page</dt>
          <dd data-testid="live-clicks">{numberFormat.format(tally.clicks)}</dd>
        </div>
        <div>
          <dt>Clicks per second</dt>
          <dd data-testid="live-rate">{rateFormat.format(currentRate(tally, now))}</dd>
        </div>
      </dl>
      <p class="hint">
        {scope}, every click as it is counted{filtered ? ' (the filters above do not apply here)' : ''}.
      </p>
      {tally.recent.length > 0 && (
        <ScrollTable label="The last clicks">
          <table class="live-recent">
            <caption class="visually-hidden">The last clicks, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Platform</th>
                <th scope="col">Country</th>
                <th scope="col">Browser</th>
                <th scope="col">Referrer</th>
              </tr>
            </thead>
            <tbody>
              {tally.recent.map((click, index) => (
                <tr key={`${click.at}-${index}`}>
                  <td class="nowrap">{click.at ? timeFormat.format(new Date(click.at)) : ''}</td>
                  <td>{valueLabel('platform')(click.platform)}</td>
                  <td>{valueLabel('country')(click.country)}</td>
                  <td>{click.browser}</td>
                  <td>{click.referrer}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollTable>
      )}
    </section>
  );
}
