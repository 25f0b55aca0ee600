import { errorForStatus, ServiceNetworkError, type ApiErrorCode, type ServiceError } from './errors.js';
import type { ErrorDetail } from './types.js';

/** Options every method takes as its last argument. */
export interface RequestOptions {
  /** Aborts the request (and any retry wait); the method then throws a ServiceNetworkError `ABORTED`. */
  signal?: AbortSignal;
  /** Overrides the client's timeoutMs for this call. */
  timeoutMs?: number;
}

export interface TransportOptions {
  baseUrl: string;
  fetch: typeof fetch | undefined;
  timeoutMs: number;
  retries: number;
  credential: () => string | undefined;
  /** Waits between attempts; tests pass one that records instead of waiting. */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

export interface Request {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** Query parameters; an array is sent as the parameter repeated. */
  query?: Record<string, string | number | Date | readonly string[] | undefined>;
  body?: unknown;
  /** A file sent as it is, with its media type, instead of a JSON body. */
  file?: { content: Blob | string; type: string };
  /**
   * How a successful body reads: the JSON envelope (default), or, for files (the export, QR codes),
   * plain text, plain JSON or a Blob. Errors are the envelope either way.
   */
  as?: 'envelope' | 'text' | 'json' | 'blob';
}

/** The Accept header for each way of reading a body. */
const ACCEPT = {
  envelope: 'application/json',
  json: 'application/json',
  text: 'text/csv, image/svg+xml, application/json',
  blob: '*/*',
} as const;

/** Only these may be sent twice: a retried POST could create a second link or key (PATCH sets values: the same twice). */
const IDEMPOTENT = new Set(['GET', 'PUT', 'PATCH', 'DELETE']);
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 8_000;
/** A Retry-After longer than this is not waited out: the caller gets the 429 to decide. */
const MAX_RETRY_AFTER_SECONDS = 60;

/** Sends requests with auth, timeouts and retries, and unwraps the response envelope. */
export function createTransport(options: TransportOptions) {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  // Looked up per call and wrapped, so a polyfill installed later works and browsers keep `this` = window.
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));

  async function attempt(request: Request, signal: AbortSignal, timeout: AbortSignal): Promise<unknown> {
    const credential = options.credential();
    const headers: Record<string, string> = { accept: ACCEPT[request.as ?? 'envelope'] };
    if (credential) headers.authorization = `Bearer ${credential}`;
    // The API refuses an empty body that claims to be JSON, so the type goes only with a body.
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    if (request.file) headers['content-type'] = request.file.type;
    const body = request.file ? request.file.content : request.body === undefined ? undefined : JSON.stringify(request.body);

    let response: Response;
    let text: string;
    try {
      response = await doFetch(buildUrl(baseUrl, request), {
        method: request.method,
        headers,
        body,
        signal,
      });
      // Binary files are read as they are; an error is still the JSON envelope.
      if (response.ok && request.as === 'blob') return await response.blob();
      text = await response.text();
    } catch (error) {
      if (timeout.aborted) throw new ServiceNetworkError('The request timed out', { code: 'TIMEOUT', cause: error });
      if (signal.aborted) throw new ServiceNetworkError('The request was aborted', { code: 'ABORTED', cause: error });
      throw new ServiceNetworkError(`Could not reach the API at ${baseUrl}: ${describe(error)}`, {
        code: 'CONNECTION_FAILED',
        cause: error,
      });
    }

    const invalid = () =>
      new ServiceNetworkError(`The API answered HTTP ${response.status} with a body that is not the API's JSON`, {
        status: response.status,
        code: 'INVALID_RESPONSE',
      });
    if (response.ok && request.as === 'text') return text;
    if (response.ok && request.as === 'json') {
      const parsed = parseJson(text);
      if (parsed === undefined) throw invalid();
      return parsed;
    }
    const envelope = parseEnvelope(text);
    if (!envelope || envelope.success !== response.ok) throw invalid();
    if (envelope.success) return envelope.data;
    const { code, message, details } = envelope.error;
    throw errorForStatus(response.status, message, {
      status: response.status,
      code,
      details,
      retryAfter: parseRetryAfter(response.headers.get('retry-after')),
    });
  }

  /** One API call: attempts, retried for idempotent methods; resolves to the envelope's `data`. */
  return async function send<T>(request: Request, callOptions: RequestOptions = {}): Promise<T> {
    const retries = IDEMPOTENT.has(request.method) ? options.retries : 0;
    for (let attemptNo = 0; ; attemptNo++) {
      const timeout = AbortSignal.timeout(callOptions.timeoutMs ?? options.timeoutMs);
      const signal = callOptions.signal ? AbortSignal.any([callOptions.signal, timeout]) : timeout;
      try {
        return (await attempt(request, signal, timeout)) as T;
      } catch (error) {
        const delay = attemptNo < retries ? retryDelay(error as ServiceError, attemptNo) : undefined;
        if (delay === undefined) throw error;
        await (options.sleep ?? sleep)(delay, callOptions.signal);
      }
    }
  };
}

/** Milliseconds to wait before the next attempt, or undefined when this failure is final. */
function retryDelay(error: ServiceError, attemptNo: number): number | undefined {
  // Connection failures and timeouts are transient; a reply is retried only for a status that says so
  // (a proxy's HTML 502 included).
  const retryable =
    RETRY_STATUSES.has(error.status ?? 0) ||
    (error instanceof ServiceNetworkError && (error.code === 'CONNECTION_FAILED' || error.code === 'TIMEOUT'));
  if (!retryable) return undefined;
  if (error.retryAfter !== undefined) {
    if (error.retryAfter > MAX_RETRY_AFTER_SECONDS) return undefined;
    // Never earlier than asked; a little later, so clients told the same moment do not return together.
    return error.retryAfter * 1000 + Math.random() * 250;
  }
  // Exponential backoff with "equal jitter": half the delay fixed, half random.
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attemptNo);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const aborted = () => reject(new ServiceNetworkError('The request was aborted', { code: 'ABORTED', cause: signal?.reason }));
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

function buildUrl(baseUrl: string, request: Request): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(request.query ?? {})) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) params.append(key, item);
    else params.set(key, value instanceof Date ? value.toISOString() : String(value));
  }
  const query = params.toString();
  return `${baseUrl}${request.path}${query ? `?${query}` : ''}`;
}

type Envelope =
  | { success: true; data: unknown }
  | { success: false; error: { code: ApiErrorCode; message: string; details: ErrorDetail[] } };

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function parseEnvelope(text: string): Envelope | undefined {
  const body = parseJson(text);
  if (typeof body !== 'object' || body === null) return undefined;
  const candidate = body as Record<string, unknown>;
  if (candidate.success === true && 'data' in candidate) return candidate as Envelope;
  const error = candidate.error as Record<string, unknown> | null | undefined;
  if (candidate.success === false && typeof error?.code === 'string' && typeof error.message === 'string') {
    // A code this client does not know (a newer API's) passes through as it is.
    return {
      success: false,
      error: { code: error.code as ApiErrorCode, message: error.message, details: Array.isArray(error.details) ? error.details : [] },
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

/** Node's fetch hides the reason (ECONNREFUSED, ENOTFOUND) in `cause`. */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}
