import { createHash } from 'node:crypto';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an HTML element body or a quoted attribute value. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** How long the iOS page waits for the app to take over before going to the fallback. */
export const APP_PAGE_FALLBACK_DELAY_MS = 1500;

const STYLE =
  `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;text-align:center}` +
  `a.button{display:block;margin:1rem 0;padding:.8rem;border-radius:.5rem;background:#1a73e8;color:#fff;text-decoration:none}` +
  `a.secondary{background:#e8eaed;color:#202124}`;

/**
 * The iOS page's script, the same for every link: it reads both targets from the page's buttons,
 * so one hash in the Content-Security-Policy allows it and nothing else. It navigates to the app,
 * then to the fallback after a short delay unless the app took over (the page got hidden): a
 * JavaScript timer, because a meta refresh does not fire after a custom-scheme navigation.
 */
const APP_PAGE_SCRIPT =
  `(function(){var app=document.getElementById('app').getAttribute('href'),fallback=document.getElementById('fallback').getAttribute('href');` +
  `var timer=setTimeout(function(){window.location.replace(fallback)},${APP_PAGE_FALLBACK_DELAY_MS});` +
  `document.addEventListener('visibilitychange',function(){if(document.hidden)clearTimeout(timer)});` +
  `window.location.href=app})()`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The Content-Security-Policy of every page the redirector serves: nothing may load or run but
 * the page's own style and the iOS page's script, named by their hashes; no forms, no framing.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha256(APP_PAGE_SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
  `<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">` +
  `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;

/** The iOS page: the app, then the fallback (see APP_PAGE_SCRIPT); both are also offered as buttons. */
export function renderAppPage(appUrl: string, fallbackUrl: string): string {
  return page(
    'Opening the app…',
    `<p>Opening the app…</p>` +
      `<a class="button" id="app" href="${escapeHtml(appUrl)}">Open in the app</a>` +
      `<a class="button secondary" id="fallback" href="${escapeHtml(fallbackUrl)}">Continue in the browser</a>` +
      `<script>${APP_PAGE_SCRIPT}</script>`,
  );
}

/** Body of the 404 answer for an unknown short link. */
export const NOT_FOUND_PAGE = page('Link not found', '<h1>Link not found</h1><p>This link does not exist.</p>');

/** Body of the 410 answer for an expired short link. */
export const GONE_PAGE = page('Link expired', '<h1>Link expired</h1><p>This link has expired and no longer works.</p>');

/** Body of the 503 answer when the link store cannot be reached. */
export const UNAVAILABLE_PAGE = page(
  'Temporarily unavailable',
  '<h1>Temporarily unavailable</h1><p>Please try again in a moment.</p>',
);
