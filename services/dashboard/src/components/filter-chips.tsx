import { type Filter, filterLabel, withNegated, withoutFilter } from '../lib/filters.js';

/**
 * The page's filters as chips: each can be turned from "is" to "is not" and back, or removed, one
 * by one; "Clear filters" removes them all. Without filters, a hint says how to add one.
 */
export function FilterChips({ filters, onChange }: { filters: readonly Filter[]; onChange: (next: Filter[]) => void }) {
  if (filters.length === 0) {
    return <p class="hint filters-hint">Choose a row of any breakdown below to see only its clicks.</p>;
  }
  return (
    <fieldset class="filters">
      <legend class="visually-hidden">Filters</legend>
      <ul class="filter-chips">
        {filters.map((filter) => {
          const label = filterLabel(filter);
          return (
            <li
              key={`${filter.dimension} ${filter.value}`}
              class={`filter-chip${filter.exclude ? ' exclude' : ''}`}
              data-testid="filter-chip"
            >
              <span class="filter-chip-label">{label}</span>
              <button
                type="button"
                class="chip-action"
                aria-label={filter.exclude ? `Include instead: ${label}` : `Exclude instead: ${label}`}
                title={filter.exclude ? 'Include this value instead' : 'Exclude this value instead'}
                onClick={() => onChange(withNegated(filters, filter))}
              >
                {filter.exclude ? 'Include' : 'Exclude'}
              </button>
              <button
                type="button"
                class="chip-action remove"
                aria-label={`Remove filter: ${label}`}
                title="Remove this filter"
                onClick={() => onChange(withoutFilter(filters, filter))}
              >
                ×
              </button>
            </li>
          );
        })}
      </ul>
      <button type="button" class="secondary small" onClick={() => onChange([])}>
        Clear filters
      </button>
    </fieldset>
  );
}
