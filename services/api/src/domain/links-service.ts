import {
  conflict,
  type CreateLinkInput,
  editableLinkFields,
  forbidden,
  generateShortCode,
  invalidRequest,
  type Link,
  linkCacheId,
  type LinkFields,
  linkFieldsSchema,
  type LinkListItem,
  linkResponseFields,
  linkSummaryFields,
  type LinkSummary,
  type ListLinksQuery,
  notFound,
  oversizedDestinations,
  type Pagination,
  type RedisKeys,
  shortUrls,
  toErrorDetails,
  type UpdateLinkBody,
} from '@deeplink/core';
import {
  type DomainsRepository,
  ForeignLinksError,
  type LinkRecord,
  type LinksRepository,
  ShortCodesTakenError,
  ShortCodeTakenError,
} from '@deeplink/core/db';
import { hashPassword } from '@deeplink/core/passwords';
import { cacheLink, type RedisClient, uncacheLink } from '@deeplink/core/redis';
import type { FastifyBaseLogger } from 'fastify';
import { applyMergePatch } from './merge-patch.js';
import { findOwnedLink } from './owned-link.js';
import type { Principal } from './auth-service.js';
import type { LinkEvents } from './link-events.js';

const CODE_ATTEMPTS = 5;

/** The stored form of a password a client sent: its argon2id hash; null (removed) and undefined (unchanged) as they are. */
const passwordHashOf = async <T extends string | null | undefined>(password: T): Promise<string | Exclude<T, string>> =>
  typeof password === 'string' ? hashPassword(password) : (password as Exclude<T, string>);

/** Links: create, read, merge-update, delete and list, each checked against the caller. */
export function linksService(deps: {
  links: LinksRepository;
  domains: DomainsRepository;
  redis: RedisClient;
  keys: RedisKeys;
  shortUrlBase: string;
  /** The longest destination a link may have, its parameters merged in (MAX_DESTINATION_BYTES). */
  maxDestinationBytes: number;
  log: FastifyBaseLogger;
  /** The link.* webhook events, sent once a change has committed. */
  events?: LinkEvents;
}) {
  const { links } = deps;
  const shortUrlOf = shortUrls(deps.shortUrlBase);
  const shortUrl = (link: LinkRecord) => shortUrlOf(link.code, link.domain);

  const toSummary = (link: LinkRecord): LinkSummary => ({ ...linkSummaryFields(link), url: shortUrl(link) });
  const toLink = (link: LinkRecord): Link => ({ ...linkResponseFields(link), url: shortUrl(link) });

  const owned = (principal: Principal, id: string) => findOwnedLink(links, principal, id);

  /** Redirectors read links from Redis; a failed write there is repaired by the worker's reconcile task. */
  async function writeThrough(action: () => Promise<void>, code: string): Promise<void> {
    try {
      await action();
    } catch (error) {
      deps.log.warn({ err: error, code }, 'link cache write failed; the reconcile task will repair it');
    }
  }

  /** Drops the click counts of deleted links (capped ones have one, see the redirector's click-caps.ts). */
  const forgetClickCount = async (...ids: string[]): Promise<void> => {
    await Promise.all(ids.map((id) => deps.redis.del(deps.keys.linkClickCount(id))));
  };

  /** Destinations that would exceed MAX_DESTINATION_BYTES once their parameters are merged. */
  const destinationProblems = (fields: LinkFields) => {
    const { expirationDate: _expiry, socialPreview: _preview, ...routing } = fields;
    return oversizedDestinations({ id: '', ...routing }, deps.maxDestinationBytes);
  };

  /** 400 when a destination would exceed MAX_DESTINATION_BYTES once its parameters are merged. */
  const assertDestinationSizes = (fields: LinkFields) => {
    const problems = destinationProblems(fields);
    if (problems.length > 0) throw invalidRequest('A destination of this link would be too long', problems);
  };

  /** 400 naming `links.N.slug` for a slug that an earlier link of the same request already asks for on the same domain. */
  const assertDistinctSlugs = (inputs: CreateLinkInput[]) => {
    const first = new Map<string, number>();
    const problems = inputs.flatMap(({ slug, domain }, index) => {
      if (slug === undefined) return [];
      const place = `${domain ?? ''}/${slug}`;
      const earlier = first.get(place);
      if (earlier === undefined) first.set(place, index);
      return earlier === undefined ? [] : [{ field: `links.${index}.slug`, message: `is the slug of links.${earlier} too` }];
    });
    if (problems.length > 0) throw invalidRequest('Two links of this request ask for the same slug; nothing was created', problems);
  };

  /** The id of the caller's active domain `hostname` (null for the default domain); 400 naming `field` otherwise. */
  const domainIdOf = async (principal: Principal, hostname: string | undefined, field: string): Promise<string | null> => {
    if (hostname === undefined) return null;
    const domain = await deps.domains.findActive(principal.userId, hostname);
    if (!domain) throw invalidRequest("The link's domain is not usable", [{ field, message: 'is not an active domain of yours' }]);
    return domain.id;
  };

  return {
    /**
     * Whether `slug` is free on the caller's domain `domain` (or the default one), with the short
     * URL a link there would have; 400 naming `domain` for a domain not theirs or not active.
     */
    async slugAvailability(principal: Principal, slug: string, domain?: string): Promise<{ available: boolean; url: string }> {
      const domainId = await domainIdOf(principal, domain, 'domain');
      return { available: (await links.findByCodes(domainId, [slug])).length === 0, url: shortUrlOf(slug, domain ?? null) };
    },

    async create(principal: Principal, body: CreateLinkInput): Promise<Link> {
      const { slug, domain, password, ...fields } = body;
      assertDestinationSizes(fields);
      const domainId = await domainIdOf(principal, domain, 'domain');
      const passwordHash = (await passwordHashOf(password)) ?? null;
      let record: LinkRecord | undefined;
      for (let attempt = 0; !record; attempt++) {
        try {
          record = await links.create(principal.userId, slug ?? generateShortCode(), fields, domainId, passwordHash);
        } catch (error) {
          if (!(error instanceof ShortCodeTakenError)) throw error;
          if (slug) {
            throw conflict('This slug is already taken', [{ field: 'slug', message: 'is already taken' }]);
          }
          if (attempt + 1 >= CODE_ATTEMPTS) throw error;
        }
      }
      const created = record;
      await writeThrough(() => cacheLink(deps.redis, deps.keys, created), linkCacheId(created.code, created.domain));
      const link = toLink(created);
      await deps.events?.created(principal.userId, [link]);
      return link;
    },

    /**
     * Creates every link in one transaction, then writes them to the cache; any invalid link or
     * taken slug: an error naming `links.N.<field>`, and nothing created.
     */
    async createMany(principal: Principal, inputs: CreateLinkInput[]): Promise<Link[]> {
      const problems = inputs.flatMap((input, index) =>
        destinationProblems(input).map((problem) => ({ ...problem, field: `links.${index}.${problem.field}` })),
      );
      if (problems.length > 0) throw invalidRequest('A destination of these links would be too long; nothing was created', problems);
      assertDistinctSlugs(inputs);
      const domainIds = await Promise.all(inputs.map(({ domain }, index) => domainIdOf(principal, domain, `links.${index}.domain`)));
      // One at a time: each hash takes 19 MiB and a core for a while (see passwords.ts).
      const passwordHashes: (string | undefined)[] = [];
      for (const { password } of inputs) passwordHashes.push(await passwordHashOf(password));
      let records: LinkRecord[];
      try {
        records = await links.createMany(
          principal.userId,
          inputs.map(({ slug, domain: _domain, password: _password, ...fields }, index) => ({
            code: slug ?? generateShortCode,
            fields,
            domainId: domainIds[index]!,
            passwordHash: passwordHashes[index],
          })),
        );
      } catch (error) {
        if (!(error instanceof ShortCodesTakenError)) throw error;
        throw conflict(
          'Some slugs are already taken; nothing was created',
          error.indexes.map((index) => ({ field: `links.${index}.slug`, message: 'is already taken' })),
        );
      }
      // Written through only after the commit, so the cache never holds a link that was rolled back.
      await this.cacheWritten(records);
      const created = records.map(toLink);
      await deps.events?.created(principal.userId, created);
      return created;
    },

    /** Writes links just committed through to the cache the redirectors read (bulk creation, imports). */
    async cacheWritten(records: LinkRecord[]): Promise<void> {
      await Promise.all(
        records.map((record) => writeThrough(() => cacheLink(deps.redis, deps.keys, record), linkCacheId(record.code, record.domain))),
      );
    },

    /** Destinations of `fields` that would exceed MAX_DESTINATION_BYTES once their parameters are merged. */
    destinationProblems,

    /** The id of the caller's active domain `hostname` (null for the default domain); 400 naming `field` otherwise. */
    domainIdOf,

    async get(principal: Principal, id: string): Promise<Link> {
      return toLink(await owned(principal, id));
    },

    async update(principal: Principal, id: string, patch: UpdateLinkBody): Promise<Link> {
      const current = await owned(principal, id);
      // Write-only, so not among the fields a patch merges into: set, removed (null) or kept as it is.
      const { password, ...fieldsPatch } = patch;
      const merged = linkFieldsSchema.safeParse(applyMergePatch(editableLinkFields(current), fieldsPatch));
      if (!merged.success) throw invalidRequest('The updated link is not valid', toErrorDetails(merged.error.issues));
      assertDestinationSizes(merged.data);
      const updated = await links.update(id, merged.data, await passwordHashOf(password));
      if (!updated) throw notFound('Link not found');
      // A link on a domain that stopped being active is served nowhere; its hostname may be
      // another account's now, so its record must not reach the cache under that name.
      const servable = !updated.domain || (await deps.domains.findActive(principal.userId, updated.domain));
      if (servable) await writeThrough(() => cacheLink(deps.redis, deps.keys, updated), linkCacheId(updated.code, updated.domain));
      const link = toLink(updated);
      await deps.events?.updated(principal.userId, link);
      return link;
    },

    async delete(principal: Principal, id: string): Promise<void> {
      await owned(principal, id);
      const code = await links.delete(id);
      if (!code) return;
      await writeThrough(() => uncacheLink(deps.redis, deps.keys, code), code);
      await writeThrough(() => forgetClickCount(id), code);
      await deps.events?.deleted(principal.userId, [id]);
    },

    /** A page of the caller's links, filtered by tags and search text, with the extras `include` asks for. */
    async list(principal: Principal, query: ListLinksQuery): Promise<{ links: LinkListItem[]; pagination: Pagination }> {
      const include = new Set(query.include ?? []);
      const page = await links.listByUser(
        principal.userId,
        { offset: (query.page - 1) * query.limit, limit: query.limit, sortBy: query.sortBy, direction: query.sortDirection },
        { tags: query.tag, search: query.q },
        include.has('clicks'),
      );
      return {
        links: page.links.map((link) => ({
          ...toSummary(link),
          ...(include.has('clicks') && { clicks: link.clicks ?? 0 }),
          ...(include.has('tags') && { tags: link.tags }),
          ...(include.has('expiry') && link.expiresAt && { expirationDate: link.expiresAt.toISOString() }),
        })),
        pagination: { total: page.total, page: query.page, limit: query.limit, pages: Math.ceil(page.total / query.limit) },
      };
    },

    /** Every tag the caller uses, with how many of their links carry it. */
    async tags(principal: Principal): Promise<{ name: string; links: number }[]> {
      return links.tagCounts(principal.userId);
    },

    /**
     * Deletes the caller's links among `ids` in one transaction and returns how many went; ids
     * that do not exist (any more) are skipped. One link of another account: 403, nothing deleted.
     */
    async deleteMany(principal: Principal, ids: string[]): Promise<number> {
      let deleted: { id: string; cacheId: string }[];
      try {
        deleted = await links.deleteOwned(principal.userId, ids);
      } catch (error) {
        if (!(error instanceof ForeignLinksError)) throw error;
        const foreign = new Set(error.ids);
        throw forbidden(
          'Some of these links belong to another account; nothing was deleted',
          ids.flatMap((id, index) => (foreign.has(id) ? [{ field: `ids.${index}`, message: 'belongs to another account' }] : [])),
        );
      }
      await Promise.all(deleted.map(({ cacheId }) => writeThrough(() => uncacheLink(deps.redis, deps.keys, cacheId), cacheId)));
      if (deleted.length > 0) await writeThrough(() => forgetClickCount(...deleted.map((link) => link.id)), 'bulk delete');
      await deps.events?.deleted(
        principal.userId,
        deleted.map((link) => link.id),
      );
      return deleted.length;
    },
  };
}
export type LinksService = ReturnType<typeof linksService>;
