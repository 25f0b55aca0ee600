const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an HTML element body or a quoted attribute value. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/**
 * A JavaScript string literal that is also safe inside a <script> element: JSON quoting plus
 * escapes for the characters that could end the element or the statement.
 */
export const jsString = (value: string): string =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** How long the iOS page waits for the app to take over before going to the fallback. */
export const APP_PAGE_FALLBACK_DELAY_MS = 1500;

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
  `<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">` +
  `<title>${escapeHtml(title)}</title>` +
  `<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;text-align:center}` +
  `a.button{display:block;margin:1rem 0;padding:.8rem;border-radius:.5rem;background:#1a73e8;color:#fff;text-decoration:none}` +
  `a.secondary{background:#e8eaed;color:#202124}</style></head><body>${body}</body></html>`;

/**
 * The iOS page: navigates to the app, then to the fallback after a short delay unless the app
 * took over (the page got hidden). A JavaScript timer, because a meta refresh does not fire
 * after a custom-scheme navigation. Both targets are also offered as buttons.
 */
export function renderAppPage(appUrl: string, fallbackUrl: string): string {
  const script =
    `(function(){var app=${jsString(appUrl)},fallback=${jsString(fallbackUrl)};` +
    `var timer=setTimeout(function(){window.location.replace(fallback)},${APP_PAGE_FALLBACK_DELAY_MS});` +
    `document.addEventListener('visibilitychange',function(){if(document.hidden)clearTimeout(timer)});` +
    `window.location.href=app})()`;
  return page(
    'Opening the app…',
    `<p>Opening the app…</p>` +
      `<a class="button" href="${escapeHtml(appUrl)}">Open in the app</a>` +
      `<a class="button secondary" href="${escapeHtml(fallbackUrl)}">Continue in the browser</a>` +
      `<script>${script}</script>`,
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
