/**
 * Grey shapes where data is coming and nothing has been shown yet, so the page keeps its layout
 * instead of jumping when the data arrives. Screen readers hear the label, politely; without one
 * the shapes are only seen (where a status nearby already says "Loading…").
 */
export function Skeleton({ label, lines = 3, kind = 'rows' }: { label?: string; lines?: number; kind?: 'rows' | 'totals' | 'chart' }) {
  return (
    <div class={`skeleton skeleton-${kind}`} {...(label ? { role: 'status', 'aria-busy': 'true' } : { 'aria-hidden': 'true' })}>
      {label && <span class="visually-hidden">{label}</span>}
      {Array.from({ length: lines }, (_, line) => (
        <span class="skeleton-block" aria-hidden="true" key={line} />
      ))}
    </div>
  );
}

/** The busy sign beside "Loading…": a small turning ring (still, for those who ask for less motion). */
export function Spinner() {
  return <span class="spinner" aria-hidden="true" />;
}

/**
 * Where a list has not arrived yet: its skeleton, or, when loading it failed, a Retry beside the
 * error the page already shows.
 */
export function FirstLoad({ label, failed, onRetry }: { label: string; failed: boolean; onRetry: () => void }) {
  if (!failed) return <Skeleton label={label} />;
  return (
    <p>
      <button type="button" class="secondary small" onClick={onRetry}>
        Retry
      </button>
    </p>
  );
}
