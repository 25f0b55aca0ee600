import { createHash } from 'node:crypto';
import type { SocialPreview } from '../schemas/links.js';
import { parseWebUrl } from './safe-url.js';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an HTML element body or a quoted attribute value. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** How long the iOS page waits for the app to take over before going to the fallback. */
export const APP_PAGE_FALLBACK_DELAY_MS = 1500;

/** The product name pages show when BRAND_NAME is not set. */
export const DEFAULT_BRAND_NAME = 'Deeplink';

// One small card in the middle of the screen, light or dark as the device prefers.
const STYLE =
  `:root{color-scheme:light dark;--bg:#f4f5f7;--card:#fff;--text:#1f2328;--muted:#59636e;--accent:#1a73e8;--soft:#e8eaed}` +
  `@media(prefers-color-scheme:dark){:root{--bg:#0f1115;--card:#1b1e24;--text:#e6e8eb;--muted:#9aa3ad;--soft:#2a2f37}}` +
  `*{box-sizing:border-box}` +
  `body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;justify-content:center;` +
  `background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;padding:1.5rem}` +
  `main{width:100%;max-width:26rem;background:var(--card);border-radius:1rem;padding:2rem 1.5rem;text-align:center;` +
  `box-shadow:0 1px 3px rgba(0,0,0,.08),0 8px 24px rgba(0,0,0,.06)}` +
  `.code{font-size:.8rem;font-weight:600;letter-spacing:.08em;color:var(--accent);text-transform:uppercase;margin:0}` +
  `h1{font-size:1.35rem;line-height:1.3;margin:.4rem 0 .6rem;overflow-wrap:anywhere}` +
  `p{color:var(--muted);margin:0 0 1rem}` +
  `a.button{display:block;margin:.75rem 0 0;padding:.85rem 1rem;border-radius:.6rem;background:var(--accent);color:#fff;` +
  `font-weight:600;text-decoration:none}` +
  `a.secondary{background:var(--soft);color:var(--text);font-weight:500}` +
  `footer{margin-top:1.25rem;font-size:.8rem;color:var(--muted)}`;

/** The longest the iOS page's store button waits for the pasteboard before it opens the store anyway. */
export const APP_PAGE_COPY_WAIT_MS = 300;

/**
 * The iOS page's script, the same for every link: it reads both targets from the page's buttons,
 * so one hash in the Content-Security-Policy allows it and nothing else. It navigates to the app,
 * then to the fallback after a short delay unless the app took over (the page got hidden): a
 * JavaScript timer, because a meta refresh does not fire after a custom-scheme navigation.
 *
 * A store fallback's button carries `data-copy`, the short URL with the visit's install token: a
 * tap copies it to the pasteboard (the app's first launch reads it there), then opens the store,
 * whether the copy worked or not, after at most APP_PAGE_COPY_WAIT_MS. Writing the pasteboard needs
 * a tap, so such a page never goes to its store on the timer: it stays, showing the button.
 */
const APP_PAGE_SCRIPT =
  `(function(){var app=document.getElementById('app').getAttribute('href'),button=document.getElementById('fallback'),` +
  `fallback=button.getAttribute('href'),copy=button.getAttribute('data-copy');` +
  `var timer=copy?0:setTimeout(function(){window.location.replace(fallback)},${APP_PAGE_FALLBACK_DELAY_MS});` +
  `document.addEventListener('visibilitychange',function(){if(document.hidden)clearTimeout(timer)});` +
  `if(copy)button.addEventListener('click',function(event){event.preventDefault();var gone=false;` +
  `var go=function(){if(!gone){gone=true;window.location.href=fallback}};setTimeout(go,${APP_PAGE_COPY_WAIT_MS});` +
  `try{navigator.clipboard.writeText(copy).then(go,go)}catch(e){go()}});` +
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

// The password page's form, on the same card.
const FORM_STYLE =
  STYLE +
  `form{margin:1rem 0 0;text-align:left}label{display:block;font-weight:600;margin:0 0 .35rem}` +
  `input{width:100%;font:inherit;padding:.7rem .8rem;border:1px solid var(--muted);border-radius:.6rem;` +
  `background:var(--card);color:var(--text)}` +
  `button{display:block;width:100%;margin:.75rem 0 0;padding:.85rem 1rem;border:0;border-radius:.6rem;` +
  `background:var(--accent);color:#fff;font:inherit;font-weight:600;cursor:pointer}` +
  `p.error{color:#d93025;font-weight:600}`;

/**
 * The password page's policy: its own style by hash, no script at all, no framing. No
 * `form-action`: browsers apply it to the redirects that follow a form's post too, and the right
 * password's answer is a redirect to the link's destination (any site, or an app's scheme), which
 * `form-action 'self'` would block. The page holds no script and no text but its own, escaped, so
 * no other form can appear on it.
 */
export const PASSWORD_PAGE_CSP = [
  "default-src 'none'",
  `style-src ${sha256(FORM_STYLE)}`,
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

// A script comes last: a navigation it starts may stop the parser, and what follows it would be lost.
const page = (brand: string, title: string, body: string, { head = '', script = '', style = STYLE } = {}) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
  `<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">` +
  `<title>${escapeHtml(title)} · ${escapeHtml(brand)}</title>${head}<style>${style}</style></head>` +
  `<body><main>${body}</main><footer>${escapeHtml(brand)}</footer>${script}</body></html>`;

/** What the iOS page says besides its two targets. */
export interface AppPageText {
  /** The link's preview title, else its title. */
  title?: string;
  /** The app's name, when a registered app has one. */
  appName?: string;
  /** The product name (BRAND_NAME). */
  brand?: string;
  /**
   * When the fallback is an app store: the URL its button copies to the pasteboard on a tap (the
   * short URL with the visit's install token). The button then says "Get <app> on the App Store".
   */
  copyUrl?: string;
}

/** App Store hosts, for the store button's label. */
const APP_STORE_HOSTS: ReadonlySet<string> = new Set(['apps.apple.com', 'itunes.apple.com']);

/** What the fallback button says: the store it opens, or the browser. */
function fallbackLabel(fallbackUrl: string, text: AppPageText): string {
  if (text.copyUrl === undefined) return 'Continue in the browser';
  const appStore = APP_STORE_HOSTS.has(parseWebUrl(fallbackUrl)?.hostname ?? '');
  return text.appName && appStore ? `Get ${text.appName} on the App Store` : 'Get the app';
}

/**
 * The iOS page: the app, then the fallback (see APP_PAGE_SCRIPT); both are also offered as buttons,
 * the app's first. With `text.copyUrl` the fallback is a store, reached by its button only.
 */
export function renderAppPage(appUrl: string, fallbackUrl: string, text: AppPageText = {}): string {
  const brand = text.brand ?? DEFAULT_BRAND_NAME;
  const opening = text.appName ? `Opening ${text.appName}…` : 'Opening the app…';
  const heading = text.title ? `<h1>${escapeHtml(text.title)}</h1>` : '';
  return page(
    brand,
    text.title ?? opening,
    `<p class="code">${escapeHtml(opening)}</p>${heading}` +
      `<p>If nothing happens, open it with the button below.</p>` +
      `<a class="button" id="app" href="${escapeHtml(appUrl)}">${escapeHtml(text.appName ? `Open in ${text.appName}` : 'Open in the app')}</a>` +
      `<a class="button secondary" id="fallback" href="${escapeHtml(fallbackUrl)}"` +
      `${text.copyUrl === undefined ? '' : ` data-copy="${escapeHtml(text.copyUrl)}"`}>${escapeHtml(fallbackLabel(fallbackUrl, text))}</a>`,
    { script: `<script>${APP_PAGE_SCRIPT}</script>` },
  );
}

/**
 * The page link-preview crawlers get: Open Graph and Twitter card tags, and a plain link to the
 * destination (crawlers run no script and most follow no redirect after a 200). `og:url` is the
 * short URL, the page's own address: naming the destination there would have a network draw the
 * destination's card instead. The image is checked again, like a destination: only an http(s)
 * URL is shown, whatever the record says.
 */
export function renderPreviewPage(
  preview: SocialPreview,
  destination: string,
  shortUrl: string,
  brand: string = DEFAULT_BRAND_NAME,
): string {
  const meta = (attribute: 'property' | 'name', name: string, value: string | undefined) =>
    value === undefined ? '' : `<meta ${attribute}="${name}" content="${escapeHtml(value)}">`;
  const imageUrl = parseWebUrl(preview.imageUrl) ? preview.imageUrl : undefined;
  const head =
    meta('property', 'og:type', 'website') +
    meta('property', 'og:title', preview.title) +
    meta('property', 'og:description', preview.description) +
    meta('property', 'og:image', imageUrl) +
    meta('property', 'og:url', shortUrl) +
    meta('property', 'og:site_name', brand) +
    meta('name', 'twitter:card', imageUrl ? 'summary_large_image' : 'summary') +
    meta('name', 'twitter:title', preview.title) +
    meta('name', 'twitter:description', preview.description) +
    meta('name', 'twitter:image', imageUrl) +
    meta('name', 'description', preview.description);
  const description = preview.description ? `<p>${escapeHtml(preview.description)}</p>` : '';
  return page(
    brand,
    preview.title,
    `<h1>${escapeHtml(preview.title)}</h1>${description}<a class="button" href="${escapeHtml(destination)}">Continue</a>`,
    { head },
  );
}

/** The form field the password page posts. */
export const PASSWORD_FIELD = 'password';

/**
 * The page of a password-protected link: a form that posts the password back to the short URL
 * itself (no action: the page's own address), without script. `title` is the owner's preview title,
 * the only thing of the link it shows; `message` says why the form is shown again.
 */
export function renderPasswordPage(brand: string = DEFAULT_BRAND_NAME, title?: string, message?: string): string {
  const heading = title ?? 'This link is protected';
  return page(
    brand,
    heading,
    `<p class="code">Password required</p><h1>${escapeHtml(heading)}</h1>` +
      `<p>Enter the password you were given to open this link.</p>` +
      (message === undefined ? '' : `<p class="error" id="error" role="alert">${escapeHtml(message)}</p>`) +
      `<form method="post"><label for="${PASSWORD_FIELD}">Password</label>` +
      `<input id="${PASSWORD_FIELD}" name="${PASSWORD_FIELD}" type="password" required autocomplete="current-password" autofocus>` +
      `<button type="submit">Open the link</button></form>`,
    { style: FORM_STYLE },
  );
}

const errorPage = (brand: string, status: string, title: string, message: string) =>
  page(brand, title, `<p class="code">${status}</p><h1>${title}</h1><p>${message}</p>`);

/** The redirector's own pages for dead ends, with the product name of BRAND_NAME. */
export function deadEndPages(brand: string = DEFAULT_BRAND_NAME) {
  return {
    /** Body of the 404 answer for an unknown short link. */
    notFound: errorPage(brand, '404', 'Link not found', 'This link does not exist. Check that it was copied completely.'),
    /** Body of the 410 answer for an expired short link. */
    gone: errorPage(brand, '410', 'Link expired', 'This link has expired and no longer works.'),
    /** Body of the 503 answer when the link store cannot be reached. */
    unavailable: errorPage(brand, '503', 'Temporarily unavailable', 'Please try again in a moment.'),
  };
}

const DEFAULT_PAGES = deadEndPages();
/** The 404 page of the default brand. */
export const NOT_FOUND_PAGE = DEFAULT_PAGES.notFound;
/** The 410 page of the default brand. */
export const GONE_PAGE = DEFAULT_PAGES.gone;
/** The 503 page of the default brand. */
export const UNAVAILABLE_PAGE = DEFAULT_PAGES.unavailable;
