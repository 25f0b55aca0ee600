import type { LinkPage as LinkPageData, LinkSortField, TagCount } from '@deeplink/client';
import { useEffect, useState } from 'preact/hooks';
import { AppLink, CopyButton, errorText, Notice } from '../components/common.js';
import { Skeleton } from '../components/loading.js';
import { LoadState } from '../components/report-state.js';
import { navigate, useLocation } from '../lib/router.js';
import { api } from '../lib/session.js';

/** The table's columns; `optional` ones are hidden at phone width. */
const COLUMNS: { field?: LinkSortField; label: string; optional?: boolean }[] = [
  { field: 'title', label: 'Title' },
  { label: 'Short URL' },
  { field: 'defaultUrl', label: 'Default URL', optional: true },
  { field: 'clicks', label: 'Clicks' },
  { label: 'Tags', optional: true },
  { field: 'createdAt', label: 'Created', optional: true },
];
const PAGE_SIZE = 20;
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** A short URL with a line break allowed after its host only: a code never breaks in the middle on a phone. */
function ShortUrl({ url }: { url: string }) {
  const text = url.replace(/^https?:\/\//, '');
  const slash = text.indexOf('/');
  return (
    <code class="short-code">
      {slash === -1 ? (
        text
      ) : (
        <>
          {text.slice(0, slash + 1)}
          <wbr />
          {text.slice(slash + 1)}
        </>
      )}
    </code>
  );
}

/** True when a link's expiry has passed: it answers "expired" (or its after-expiry URL) now. */
const hasExpired = (expirationDate: string | undefined, now: number) => expirationDate !== undefined && Date.parse(expirationDate) <= now;

/** The list state lives in the address (?q=&tag=a,b&sort=&dir=&page=), so a view can be bookmarked and Back works. */
function useListQuery() {
  const { query } = useLocation();
  const state = {
    q: query.get('q') ?? '',
    /** Every tag a link must carry. */
    tags: (query.get('tag') ?? '').split(',').filter(Boolean),
    sortBy: (query.get('sort') as LinkSortField | null) ?? 'createdAt',
    sortDirection: (query.get('dir') as 'asc' | 'desc' | null) ?? 'desc',
    page: Number(query.get('page') ?? 1) || 1,
  };
  const update = (changes: Partial<typeof state>) => {
    const next = { ...state, page: 1, ...changes };
    const params = new URLSearchParams();
    if (next.q) params.set('q', next.q);
    if (next.tags.length > 0) params.set('tag', next.tags.join(','));
    if (next.sortBy !== 'createdAt') params.set('sort', next.sortBy);
    if (next.sortDirection !== 'desc') params.set('dir', next.sortDirection);
    if (next.page > 1) params.set('page', String(next.page));
    const search = params.toString();
    navigate(`/links${search ? `?${search}` : ''}`, { replace: true });
  };
  return [state, update] as const;
}

/** Every link: search, filter by tag, sort, page, copy a short URL, delete several at once. */
export function LinksPage() {
  const [state, update] = useListQuery();
  const [data, setData] = useState<LinkPageData>();
  const [tags, setTags] = useState<TagCount[]>([]);
  const [loading, setLoading] = useState(true);
  /** Why the list could not be loaded; `error` is for what the page does with it (deleting). */
  const [loadError, setLoadError] = useState<string>();
  const [error, setError] = useState<string>();
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [reload, setReload] = useState(0);
  const [search, setSearch] = useState(state.q);

  useEffect(() => {
    const controller = new AbortController();
    setLoading(true);
    setLoadError(undefined);
    api.links
      .list(
        {
          page: state.page,
          limit: PAGE_SIZE,
          sortBy: state.sortBy,
          sortDirection: state.sortDirection,
          q: state.q || undefined,
          tag: state.tags.length > 0 ? state.tags : undefined,
          include: ['clicks', 'tags', 'expiry'],
        },
        { signal: controller.signal },
      )
      .then((page) => {
        // Past the last page (links deleted from it): show the last page there is.
        if (page.links.length === 0 && page.pagination.total > 0 && state.page > 1) return update({ page: page.pagination.pages });
        setData(page);
        setLoading(false);
      })
      .catch((caught) => {
        if (controller.signal.aborted) return;
        // No rows rather than those of another search or page.
        setData(undefined);
        setLoadError(errorText(caught));
        setLoading(false);
      });
    return () => controller.abort();
  }, [state.page, state.sortBy, state.sortDirection, state.q, state.tags.join(','), reload]);
  useEffect(() => {
    api.tags
      .list()
      .then(setTags)
      .catch(() => setTags([]));
  }, [reload]);

  const sortBy = (field: LinkSortField) =>
    update({ sortBy: field, sortDirection: state.sortBy === field && state.sortDirection === 'asc' ? 'desc' : 'asc' });

  const toggle = (id: string) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };

  const deleteSelected = async () => {
    if (!confirm(`Delete ${selected.size} link${selected.size === 1 ? '' : 's'} and their analytics? This cannot be undone.`)) return;
    try {
      await api.links.bulkDelete([...selected]);
      setSelected(new Set());
      setReload(reload + 1);
    } catch (caught) {
      setError(errorText(caught));
    }
  };

  const links = data?.links ?? [];
  const filtered = Boolean(state.q || state.tags.length > 0);
  const now = Date.now();
  return (
    <section aria-busy={loading}>
      <div class="page-head">
        <h1>Links</h1>
        <AppLink href="/links/new" class="button">
          New link
        </AppLink>
      </div>
      {/* biome-ignore lint/a11y/useSemanticElements: a form with the search role is the same landmark as <search>, in every browser */}
      <form
        class="toolbar"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          update({ q: search.trim() });
        }}
      >
        <div class="field inline">
          <label for="links-search">Search</label>
          <input
            id="links-search"
            type="search"
            value={search}
            placeholder="Title, URL or code"
            onInput={(event) => setSearch(event.currentTarget.value)}
          />
        </div>
        <div class="field inline">
          <label for="links-tag">Only links tagged</label>
          <select
            id="links-tag"
            value=""
            onChange={(event) => {
              const tag = event.currentTarget.value;
              if (tag) update({ tags: [...state.tags, tag] });
            }}
          >
            <option value="">{state.tags.length === 0 ? 'Any tag' : 'And also…'}</option>
            {tags
              .filter((tag) => !state.tags.includes(tag.name))
              .map((tag) => (
                <option key={tag.name} value={tag.name}>
                  {tag.name} ({tag.links})
                </option>
              ))}
          </select>
        </div>
        <button type="submit" class="secondary">
          Search
        </button>
        {selected.size > 0 && (
          <button type="button" class="danger" onClick={deleteSelected}>
            Delete selected ({selected.size})
          </button>
        )}
      </form>
      {state.tags.length > 0 && (
        <ul class="chips" aria-label="Tags every link shown carries">
          {state.tags.map((tag) => (
            <li key={tag}>
              <button
                type="button"
                class="chip"
                aria-label={`Remove the tag filter ${tag}`}
                onClick={() => update({ tags: state.tags.filter((each) => each !== tag) })}
              >
                {tag} <span aria-hidden="true">×</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      {error && <Notice>{error}</Notice>}
      {/* The first load shows the skeleton; later ones (a search, a page) keep the rows, dimmed. */}
      <LoadState loading={loading && data !== undefined} error={loadError} onRetry={() => setReload(reload + 1)} />
      {data === undefined && loading && <Skeleton label="Loading your links…" lines={8} />}
      {data &&
        data.pagination.total === 0 &&
        (filtered ? (
          <Notice kind="info">
            No link matches.{' '}
            <button
              type="button"
              class="link"
              onClick={() => {
                setSearch('');
                update({ q: '', tags: [] });
              }}
            >
              Clear the search
            </button>
          </Notice>
        ) : (
          <div class="empty card">
            <h2>No links yet</h2>
            <p>
              Create your first link: give it a title and the page it should open. Add the Android and iOS apps it should open when you have
              them; every visit is counted from the first click.
            </p>
            <AppLink href="/links/new" class="button">
              Create your first link
            </AppLink>
          </div>
        ))}
      {links.length > 0 && (
        <div class={loading ? 'links-scroll stale' : 'links-scroll'}>
          <table class="links">
            <caption class="visually-hidden">Your links, {data!.pagination.total} in all</caption>
            <thead>
              <tr>
                <th scope="col">
                  <span class="visually-hidden">Select</span>
                </th>
                {COLUMNS.map((column) => (
                  <th
                    scope="col"
                    key={column.label}
                    class={column.optional ? 'optional' : undefined}
                    aria-sort={
                      column.field && state.sortBy === column.field
                        ? state.sortDirection === 'asc'
                          ? 'ascending'
                          : 'descending'
                        : undefined
                    }
                  >
                    {column.field ? (
                      <button type="button" class="sort" onClick={() => sortBy(column.field!)}>
                        {column.label}
                        {state.sortBy === column.field ? (state.sortDirection === 'asc' ? ' ▲' : ' ▼') : ''}
                      </button>
                    ) : (
                      column.label
                    )}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {links.map((link) => (
                <tr key={link.id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select ${link.title}`}
                      checked={selected.has(link.id)}
                      onChange={() => toggle(link.id)}
                    />
                  </td>
                  <td>
                    <AppLink href={`/links/${link.id}`}>{link.title}</AppLink>
                    {hasExpired(link.expirationDate, now) && <span class="badge expired">Expired</span>}
                  </td>
                  <td>
                    <ShortUrl url={link.url} /> <CopyButton text={link.url} />
                  </td>
                  <td class="url optional">{link.defaultUrl}</td>
                  <td class="num">{link.clicks ?? 0}</td>
                  <td class="optional">
                    {(link.tags ?? []).map((tag) => (
                      <span class="tag" key={tag}>
                        {tag}
                      </span>
                    ))}
                  </td>
                  <td class="nowrap optional">{dateFormat.format(new Date(link.createdAt))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data && data.pagination.pages > 1 && (
        <nav class="pager" aria-label="Pages">
          <button type="button" class="secondary" disabled={state.page <= 1} onClick={() => update({ page: state.page - 1 })}>
            Previous
          </button>
          <span>
            Page {data.pagination.page} of {data.pagination.pages}
          </span>
          <button
            type="button"
            class="secondary"
            disabled={state.page >= data.pagination.pages}
            onClick={() => update({ page: state.page + 1 })}
          >
            Next
          </button>
        </nav>
      )}
    </section>
  );
}
