import { type AppSdkError, errorForStatus, NetworkError } from './errors.js';
import { newInstallId, newOpenId } from './open-id.js';
import type { DeviceFacts, PlatformReaders } from './platform.js';
import type { AppInstallResult, AppOpenResult, ErrorDetail, InstallDevice } from './types.js';

export interface DeepLinkClientOptions {
  /** The API's address including `/api`, e.g. `https://api.acme.com/api`. */
  baseUrl: string;
  /** The app's publishable key (`dla_…`), from registering the app or rotating its key. Never an API key. */
  appKey: string;
  /**
   * The fetch to call; the global one by default. Pass a platform's own (Capacitor's native HTTP,
   * say) or a wrapper that logs or counts.
   */
  fetch?: typeof fetch;
  /** Milliseconds one attempt may take before it is abandoned (and retried). Default 10,000. */
  timeoutMs?: number;
  /**
   * How many times an open is tried again after a network error, a timeout, a 429 or a 502-504.
   * Default 2. Every attempt sends the same openId, so a retried open is still one open.
   */
  retries?: number;
  /**
   * The longest Retry-After (seconds) a 429 is waited out before trying again; a longer one is
   * thrown at once as a RateLimitedError, since a person is waiting for the app to open. Default 5.
   */
  maxRetryAfterSeconds?: number;
  /**
   * Where install() reads what the call leaves out: the Play install referrer, the pasteboard's
   * URL, the device's facts. Only install() reads them, and only when it is called.
   */
  platform?: PlatformReaders;
}

export interface OpenOptions {
  /** An id for this open, 8-64 of `A-Z a-z 0-9 - _`; a fresh UUID when not given. */
  openId?: string;
  /**
   * The installId the app keeps (the one it passes to install()): the link's unique re-opens then
   * count this install once, however often it opens. Without it, each open counts as one. Not
   * made up when absent: only the kept one means anything.
   */
  installId?: string;
  /** Whether this is the app's first launch after it was installed. */
  firstLaunch?: boolean;
  /** Aborts the call, waits between retries included; it then throws a NetworkError `ABORTED`. */
  signal?: AbortSignal;
}

export interface InstallOptions {
  /**
   * The id of this install, 8-64 of `A-Z a-z 0-9 - _`: make one with newInstallId() at the first
   * launch, keep it in the app's storage, and pass the same one on every call (a retry, the next
   * launch), so the install is matched and counted once. A fresh one when not given.
   */
  installId?: string;
  /** Android: the Play install referrer; read from `platform.installReferrer` when not given. */
  referrer?: string;
  /** iOS: the URL on the pasteboard; read from `platform.pasteboard` when not given. */
  pasteboard?: string;
  /** Device facts for the probabilistic match (when the app's owner turned it on); read from `platform.device` when not given. */
  device?: InstallDevice;
  /** Aborts the call, waits between retries included; it then throws a NetworkError `ABORTED`. */
  signal?: AbortSignal;
}

export interface DeepLinkClient {
  /**
   * What the link at `url` (the Universal Link or App Link the app was opened with, on the
   * default short domain or a custom one) holds for this app. Throws an AppSdkError subclass.
   */
  open(url: string, options?: OpenOptions): Promise<AppOpenResult>;
  /**
   * At the app's first launch: the link that brought this install (a deferred deep link), or
   * `{ match: null }`. Throws an AppSdkError subclass; retries resend the same installId.
   */
  install(options?: InstallOptions): Promise<AppInstallResult>;
}

const RETRY_STATUSES = new Set([429, 502, 503, 504]);
const BACKOFF_BASE_MS = 300;
const BACKOFF_MAX_MS = 3_000;

/** A client for the App SDK endpoints, with the app's key. Creating it sends nothing. */
export function createDeepLinkClient(options: DeepLinkClientOptions): DeepLinkClient {
  if (!options.baseUrl) throw new TypeError('createDeepLinkClient: baseUrl is required');
  if (!options.appKey) throw new TypeError('createDeepLinkClient: appKey is required');
  const base = options.baseUrl.replace(/\/+$/, '');
  // Looked up per call and wrapped, so a polyfill installed later works and browsers keep `this` = window.
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const timeoutMs = options.timeoutMs ?? 10_000;
  const retries = options.retries ?? 2;
  const maxRetryAfterSeconds = options.maxRetryAfterSeconds ?? 5;

  /** One request; resolves to the envelope's data or throws the error it stands for. */
  async function attempt(endpoint: string, body: string, signal: AbortSignal | undefined): Promise<unknown> {
    // AbortSignal.timeout and AbortSignal.any are missing from React Native: one controller does both.
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const forwardAbort = () => controller.abort();
    signal?.addEventListener('abort', forwardAbort, { once: true });

    let response: Response;
    let text: string;
    try {
      if (signal?.aborted) controller.abort();
      response = await doFetch(endpoint, {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/json', 'x-app-key': options.appKey },
        body,
        signal: controller.signal,
      });
      text = await response.text();
    } catch (error) {
      if (timedOut) throw new NetworkError(`No answer from ${endpoint} within ${timeoutMs} ms`, { code: 'TIMEOUT', cause: error });
      if (signal?.aborted) throw new NetworkError('The call was aborted', { code: 'ABORTED', cause: error });
      throw new NetworkError(`Could not reach ${endpoint}: ${describe(error)}`, { code: 'CONNECTION_FAILED', cause: error });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forwardAbort);
    }

    const envelope = parseEnvelope(text);
    if (!envelope || envelope.success !== response.ok) {
      throw new NetworkError(`The API answered HTTP ${response.status} with a body that is not its JSON`, {
        status: response.status,
        code: 'INVALID_RESPONSE',
      });
    }
    if (envelope.success) return envelope.data;
    const { code, message, details } = envelope.error;
    throw errorForStatus(response.status, message, {
      status: response.status,
      code,
      details,
      retryAfterSeconds: parseRetryAfter(response.headers.get('retry-after')),
    });
  }

  /** Milliseconds to wait before trying again, or undefined when this failure is final. */
  function retryDelay(error: AppSdkError, attemptNo: number): number | undefined {
    if (attemptNo >= retries) return undefined;
    const transient =
      RETRY_STATUSES.has(error.status ?? 0) ||
      (error instanceof NetworkError && (error.code === 'CONNECTION_FAILED' || error.code === 'TIMEOUT'));
    if (!transient) return undefined;
    const retryAfter = 'retryAfterSeconds' in error ? (error.retryAfterSeconds as number | undefined) : undefined;
    if (retryAfter !== undefined) {
      if (retryAfter > maxRetryAfterSeconds) return undefined;
      // Never earlier than asked; a little later, so installs told the same moment do not return together.
      return retryAfter * 1000 + Math.random() * 250;
    }
    // Exponential backoff with "equal jitter": half the delay fixed, half random.
    const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attemptNo);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  /** POSTs `body` to `path`, retrying transient failures with exactly the same body. */
  async function send(path: string, body: object, signal: AbortSignal | undefined): Promise<unknown> {
    // Serialised once: every attempt sends exactly the same call.
    const text = JSON.stringify(body);
    for (let attemptNo = 0; ; attemptNo++) {
      try {
        return await attempt(`${base}${path}`, text, signal);
      } catch (error) {
        const delay = retryDelay(error as AppSdkError, attemptNo);
        if (delay === undefined) throw error;
        await sleep(delay, signal);
      }
    }
  }

  const readers = options.platform ?? {};

  return {
    async open(url, openOptions = {}) {
      const { signal, firstLaunch, installId } = openOptions;
      const openId = openOptions.openId ?? newOpenId();
      const body = { url, openId, ...(installId !== undefined && { installId }), ...(firstLaunch !== undefined && { firstLaunch }) };
      return (await send('/app/open', body, signal)) as AppOpenResult;
    },

    async install(installOptions = {}) {
      const { signal } = installOptions;
      // What the call leaves out is read now, once: a reader that fails counts as having nothing.
      const [referrer, pasteboard, device] = await Promise.all([
        installOptions.referrer ?? readSafely(() => readers.installReferrer?.readInstallReferrer()),
        installOptions.pasteboard ?? readSafely(() => readers.pasteboard?.readPasteboardUrl()),
        installOptions.device ?? readSafely(async () => installDevice(await readers.device?.readDeviceFacts())),
      ]);
      const body = {
        installId: installOptions.installId ?? newInstallId(),
        ...(referrer && { referrer }),
        ...(pasteboard && { pasteboard }),
        ...(device && { device }),
      };
      return (await send('/app/install', body, signal)) as AppInstallResult;
    },
  };
}

/** A reader's answer, or undefined when there is no reader or it failed (no referrer service, no pasteboard access). */
async function readSafely<T>(read: () => Promise<T | undefined> | undefined): Promise<T | undefined> {
  try {
    return await read();
  } catch {
    return undefined;
  }
}

/** The device facts as /app/install takes them: only when the three it compares are known. */
function installDevice(facts: DeviceFacts | undefined): InstallDevice | undefined {
  if (!facts?.osVersion || !facts.deviceFamily || !facts.locale) return undefined;
  return {
    osVersion: facts.osVersion,
    deviceFamily: facts.deviceFamily,
    language: facts.locale,
    ...(facts.timeZone && { timeZone: facts.timeZone }),
    ...(facts.screen && { screen: facts.screen }),
  };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => reject(new NetworkError('The call was aborted', { code: 'ABORTED', cause: signal?.reason }));
    if (signal?.aborted) return aborted();
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      aborted();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

type Envelope = { success: true; data: unknown } | { success: false; error: { code: string; message: string; details: ErrorDetail[] } };

function parseEnvelope(text: string): Envelope | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const candidate = body as Record<string, unknown>;
  if (candidate.success === true && typeof candidate.data === 'object' && candidate.data !== null) return candidate as Envelope;
  const error = candidate.error as Record<string, unknown> | null | undefined;
  if (candidate.success === false && typeof error?.code === 'string' && typeof error.message === 'string') {
    return {
      success: false,
      error: { code: error.code, message: error.message, details: Array.isArray(error.details) ? error.details : [] },
    };
  }
  return undefined;
}

/** Retry-After is either delay-seconds or an HTTP date. */
function parseRetryAfter(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/** Node's and some platforms' fetch hide the reason (ECONNREFUSED, ENOTFOUND) in `cause`. */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
