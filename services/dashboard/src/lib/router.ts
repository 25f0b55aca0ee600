import { useEffect, useState } from 'preact/hooks';

/**
 * A small history router: the API serves index.html for every page path, so addresses are plain
 * paths (/links/abc) that can be bookmarked and reloaded.
 */
type Listener = () => void;
const listeners = new Set<Listener>();

export function navigate(to: string, { replace = false } = {}): void {
  if (to === location.pathname + location.search) return;
  const newPage = new URL(to, location.href).pathname !== location.pathname;
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  for (const listener of listeners) listener();
  if (!newPage) return; // a new search or sort on the same page keeps the focus where it is
  window.scrollTo(0, 0);
  // Keyboard and screen-reader users start on the new page's content, not on the link they used.
  requestAnimationFrame(() => document.getElementById('main')?.focus({ preventScroll: true }));
}

addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

/** The current path and query, re-rendering on navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((tick) => tick + 1);
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** Matches `/links/:id/edit` against a path: the named segments, or undefined. */
export function matchPath(pattern: string, path: string): Record<string, string> | undefined {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, part] of want.entries()) {
    const segment = have[index]!;
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(segment);
    else if (part !== segment) return undefined;
  }
  return params;
}

/** Click handler for in-app anchors: plain left clicks navigate without a reload. */
export function followLink(event: MouseEvent): void {
  const anchor = event.currentTarget as HTMLAnchorElement;
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(anchor.getAttribute('href') ?? '/');
}
