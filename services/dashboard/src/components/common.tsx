import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { followLink } from '../lib/router.js';

/** An in-app link: navigates without reloading the page. */
export function AppLink({ href, children, class: className }: { href: string; children: ComponentChildren; class?: string }) {
  return (
    <a href={href} class={className} onClick={followLink}>
      {children}
    </a>
  );
}

/**
 * Puts `text` on the clipboard. The Clipboard API exists only in secure contexts (https, or
 * localhost): a dashboard opened over plain http elsewhere copies through a selected text area.
 */
async function copyText(text: string): Promise<void> {
  if (navigator.clipboard) return navigator.clipboard.writeText(text);
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'visually-hidden';
  document.body.append(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

/**
 * Copies `text` to the clipboard and says so for two seconds (politely, for screen readers too).
 * The button's name is its visible word and what it copies, so "Copied" stays part of the name.
 */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await copyText(text);
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  };
  const word = copied ? 'Copied' : label;
  return (
    <button type="button" class="secondary small" onClick={copy} aria-label={`${word}: ${text}`}>
      <span aria-live="polite">{word}</span>
    </button>
  );
}

/**
 * A table in a box that scrolls when the table is wider or taller than the page allows: a named
 * region the keyboard can reach (Tab), so its hidden part can be scrolled without a mouse.
 */
export function ScrollTable({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take the focus for the keyboard to scroll it (WCAG 2.1.1)
    <section class="table-scroll" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}

/**
 * A chart with its "Show as table" alternative: the same numbers, readable without the picture.
 * The table is built only when shown (a year by hour is 8,760 rows).
 */
export function ChartCard({
  title,
  chart,
  table,
  actions,
}: {
  title: string;
  chart: ComponentChildren;
  table: () => ComponentChildren;
  actions?: ComponentChildren;
}) {
  const [asTable, setAsTable] = useState(false);
  const id = `card-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section class="card" aria-labelledby={id}>
      <div class="card-head">
        <h2 id={id}>{title}</h2>
        <div class="card-actions">
          {actions}
          <button type="button" class="secondary small" aria-pressed={asTable} onClick={() => setAsTable(!asTable)}>
            {asTable ? 'Show as chart' : 'Show as table'}
          </button>
        </div>
      </div>
      {asTable ? <ScrollTable label={`${title}, as a table`}>{table()}</ScrollTable> : chart}
    </section>
  );
}

/** A message for the whole page: an error from the API or a hint. */
export function Notice({ kind = 'error', children }: { kind?: 'error' | 'info'; children: ComponentChildren }) {
  return (
    <p class={`notice ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </p>
  );
}

/**
 * A page whose subject could not be loaded: a heading, why, Retry (unless it cannot exist) and a
 * way back. Focused when it appears, so a screen reader says it.
 */
export function LoadFailed({
  title,
  message,
  onRetry,
  back,
}: {
  title: string;
  message: string;
  onRetry?: () => void;
  back: { href: string; label: string };
}) {
  return (
    <section class="load-failed">
      <h1 tabIndex={-1} ref={(heading) => heading?.focus()}>
        {title}
      </h1>
      <p>{message}</p>
      <div class="toolbar">
        {onRetry && (
          <button type="button" onClick={onRetry}>
            Retry
          </button>
        )}
        <AppLink href={back.href} class="button secondary">
          {back.label}
        </AppLink>
      </div>
    </section>
  );
}

/** True for the API's 404: the thing asked for does not exist (or no longer). */
export const isNotFound = (error: unknown): boolean => (error as { status?: number } | undefined)?.status === 404;

/** What went wrong, in words a person can act on. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Saves `content` as a file the browser downloads. */
export function download(content: Blob | string, filename: string, type = 'text/plain'): void {
  const blob = typeof content === 'string' ? new Blob([content], { type }) : content;
  const url = URL.createObjectURL(blob);
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = filename;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
