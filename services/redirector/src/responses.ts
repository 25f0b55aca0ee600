import { deadEndPages, newInstallToken, PAGE_CSP } from '@deeplink/core';
import type { HttpResponse, RecognizedString } from 'uws-bundled';
import type { ResponseStatus } from './metrics.js';
import { byteLength, type SlottedText, wire } from './wire.js';

/** Every status the redirector answers with: the counted ones of short-link requests, and 500. */
export type HttpStatus = ResponseStatus | 500;

/** A header to write: name and value, in the form uWebSockets.js takes fastest. */
export type Header = readonly [name: RecognizedString, value: RecognizedString];

/**
 * A complete answer, prepared once and written as often as asked: a redirect or a page. Every
 * answer is `Cache-Control: private, no-store`: links are editable and every visit must reach
 * analytics, so nothing may be cached downstream. Built only by `redirectTo` and `page`, so all
 * answers share one object shape and writing one stays cheap.
 */
export type Answer<S extends HttpStatus = HttpStatus> = Redirect | Page<S>;

interface AnswerBase<S extends HttpStatus> {
  readonly status: S;
  /** The status line, e.g. `302 Found`. */
  readonly statusLine: RecognizedString;
  /** Headers beyond those every answer of its kind has (Retry-After, Allow). */
  readonly headers: readonly Header[];
  /**
   * A store answer that hands each visit an install token: its Location or page with the token's
   * slot (the location or body above is this text unfilled, for its length). Undefined for the rest.
   */
  readonly minted: SlottedText | undefined;
  /** The Content-Security-Policy of an HTML page (the pages' own, unless the page brings one); undefined for the rest. */
  readonly policy: RecognizedString | undefined;
}

/** A 302 without a body. */
export interface Redirect extends AnswerBase<302> {
  readonly location: RecognizedString;
  readonly type: undefined;
  readonly body: undefined;
}

/** A page of `type`; HTML pages carry the pages' Content-Security-Policy. */
export interface Page<S extends HttpStatus = HttpStatus> extends AnswerBase<S> {
  readonly location: undefined;
  readonly type: RecognizedString;
  readonly body: RecognizedString;
}

const REASONS: Record<HttpStatus, string> = {
  200: 'OK',
  302: 'Found',
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  410: 'Gone',
  413: 'Content Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
const STATUS_LINE = Object.fromEntries(Object.entries(REASONS).map(([status, reason]) => [status, wire(`${status} ${reason}`)])) as Record<
  HttpStatus,
  RecognizedString
>;

const HEADER = {
  location: wire('Location'),
  cacheControl: wire('Cache-Control'),
  contentType: wire('Content-Type'),
  contentLength: wire('Content-Length'),
  connection: wire('Connection'),
  contentSecurityPolicy: wire('Content-Security-Policy'),
  setCookie: wire('Set-Cookie'),
};
const NO_STORE = wire('private, no-store');
/** Every HTML page: only its own style and the iOS page's script may apply (see PAGE_CSP). */
const CSP = wire(PAGE_CSP);
const CLOSE = wire('close');
const NO_HEADERS: readonly Header[] = [];

export const TYPE = {
  html: wire('text/html; charset=utf-8'),
  json: wire('application/json'),
  text: wire('text/plain'),
};

/** A 302 to `location` (a text of `wire`, or one with an install token's slot: see Responder.send). */
export const redirectTo = (location: RecognizedString | SlottedText): Redirect => ({
  status: 302,
  statusLine: STATUS_LINE[302],
  headers: NO_HEADERS,
  minted: isSlotted(location) ? location : undefined,
  location: isSlotted(location) ? location.text : location,
  policy: undefined,
  type: undefined,
  body: undefined,
});

/**
 * A page: `body` (a text of `wire`, a string for one-off bodies, or one with an install token's slot)
 * as `type`. An HTML page carries the pages' Content-Security-Policy, or `policy` when given.
 */
export const page = <S extends HttpStatus>(
  status: S,
  type: RecognizedString,
  body: RecognizedString | SlottedText,
  headers = NO_HEADERS,
  policy: RecognizedString | undefined = type === TYPE.html ? CSP : undefined,
): Page<S> => ({
  status,
  statusLine: STATUS_LINE[status],
  headers,
  minted: isSlotted(body) ? body : undefined,
  policy,
  location: undefined,
  type,
  body: isSlotted(body) ? body.text : body,
});

const isSlotted = (text: RecognizedString | SlottedText): text is SlottedText => typeof text === 'object' && 'fill' in text;

/** Bytes an answer holds (its location or body), for the caches that keep answers. */
export const answerBytes = (answer: Answer | undefined): number => {
  const text = answer?.location ?? answer?.body;
  return text === undefined ? 0 : byteLength(text);
};

/**
 * Any method but GET and HEAD, and a POST to a short link without a password (only a protected
 * link's form posts; see link-passwords.ts).
 */
export const METHOD_NOT_ALLOWED = page(405, TYPE.text, wire('Method Not Allowed\n'), [[wire('Allow'), wire('GET, HEAD')]]);

/** The branded pages of links that lead nowhere (see deadEndPages), as answers. */
export function deadEndAnswers(brand: string) {
  const pages = deadEndPages(brand);
  return {
    notFound: page(404, TYPE.html, wire(pages.notFound)),
    gone: page(410, TYPE.html, wire(pages.gone)),
    /** The link store could not be reached: try again shortly. */
    unavailable: page(503, TYPE.html, wire(pages.unavailable), [[wire('Retry-After'), wire('5')]]),
  };
}

/**
 * Writes answers. `closing` is set at shutdown: from then on every answer tells keep-alive clients
 * to reconnect (to another instance).
 */
export class Responder {
  closing = false;

  /** `native`: a real uWebSockets.js build, not its JavaScript fallback (they end a HEAD differently). */
  constructor(private readonly native: boolean) {}

  /**
   * Ends the response with `answer`; HEAD gets the same headers and length without the body. An
   * answer that mints install tokens (`minted`) is written with `token` in its slot (the caller
   * mints it and records it with the click; without one, a fresh token nobody recorded goes there).
   * `cookie`: a Set-Cookie value to send along (a protected link's pass).
   */
  send(res: HttpResponse, head: boolean, answer: Answer, token?: string, cookie?: string): void {
    res.writeStatus(answer.statusLine);
    if (cookie !== undefined) res.writeHeader(HEADER.setCookie, cookie);
    const { minted } = answer;
    if (answer.location !== undefined) {
      const location = minted === undefined ? answer.location : minted.fill(token ?? newInstallToken());
      res.writeHeader(HEADER.location, location).writeHeader(HEADER.cacheControl, NO_STORE);
      res.end(undefined, this.closing);
      return;
    }
    const { type } = answer;
    const body = minted === undefined || head ? answer.body : minted.fill(token ?? newInstallToken());
    res.writeHeader(HEADER.contentType, type).writeHeader(HEADER.cacheControl, NO_STORE);
    if (answer.policy !== undefined) res.writeHeader(HEADER.contentSecurityPolicy, answer.policy);
    for (const [name, value] of answer.headers) res.writeHeader(name, value);
    if (!head) {
      res.end(body, this.closing);
      return;
    }
    // HEAD: the GET's length without its body. This uWS build never completes
    // endWithoutBody(length) for length > 0, and the JS fallback's end('') states no length.
    res.writeHeader(HEADER.contentLength, String(byteLength(body)));
    if (!this.native) {
      res.end('', this.closing);
      return;
    }
    if (this.closing) res.writeHeader(HEADER.connection, CLOSE);
    res.endWithoutBody();
  }
}
