import type { LinkFields, LinkSortField } from '../schemas/links.js';
import type { Fragment, Sql, TransactionSql } from './client.js';
import { isUniqueViolation } from './errors.js';
import { linkCacheId, parseLinkCacheId } from '../links/cache-id.js';
import { type LinkRecord, linkColumns, linkColumnValues, readLink, type Storage } from '../links/link-fields.js';
import { isUuid } from './uuid.js';

export type { LinkRecord, RegisteredIosApp } from '../links/link-fields.js';

export interface LinkListPage {
  /** With `clicks` (all-time) when the listing asked for them. */
  links: (LinkRecord & { clicks?: number })[];
  total: number;
}

/** Which of a user's links a listing covers; every condition given must hold. */
export interface LinkFilter {
  /** Tags the link must all carry. */
  tags?: string[];
  /** Case-insensitive text in the title, default URL or short code. */
  search?: string;
}

/** Thrown by deleteOwned when some of the links belong to another user; nothing was deleted. */
export class ForeignLinksError extends Error {
  override name = 'ForeignLinksError';
  constructor(readonly ids: string[]) {
    super(`links of another user: ${ids.join(', ')}`);
  }
}

/** Thrown by create when the short code is taken, so the caller can pick another. */
export class ShortCodeTakenError extends Error {
  override name = 'ShortCodeTakenError';
}

/** Thrown by createMany when chosen short codes are taken (by index in the input); nothing was created. */
export class ShortCodesTakenError extends Error {
  override name = 'ShortCodesTakenError';
  constructor(readonly indexes: number[]) {
    super(`short codes taken at ${indexes.join(', ')}`);
  }
}

/** One link of createMany: fields, and a chosen short code, or a function that draws one. */
export interface NewLink {
  code: string | (() => string);
  fields: LinkFields;
  /** The active custom domain the link lives on; null for the default domain. */
  domainId: string | null;
  /** The argon2id hash of its password; absent or null for an open link. */
  passwordHash?: string | null;
}

/** Array type OIDs, so that an empty array still has a type. */
const TEXT_ARRAY = 25;
const UUID_ARRAY = 2950;

/** `text` matched literally inside an ILIKE pattern. */
const escapeLike = (text: string) => text.replace(/[\\%_]/g, (character) => `\\${character}`);

/** Links: the management rows. SQL for links lives here and nowhere else. */
export function linksRepository(sql: Sql) {
  // Fragments that never change, built once per pool instead of on every request.
  const columns = linkColumns(sql);
  /**
   * What each sortBy orders by. Titles are for people: ICU's root collation (`und-x-icu`, built into
   * PostgreSQL with ICU, as every official image is) sorts them case-insensitively and by letter
   * (`apple`, `Banana`, `Éclair`, `zebra`) whatever the database's own locale; a database created with
   * the C locale would otherwise sort by bytes (`Banana` before `apple`). URLs keep byte order.
   */
  const allTimeClicks = sql`coalesce((SELECT sum(d.clicks) FROM click_daily d WHERE d.link_id = links.id), 0)::bigint`;
  const sortKeys: Record<LinkSortField, Fragment> = {
    createdAt: sql`created_at`,
    updatedAt: sql`updated_at`,
    title: sql`title COLLATE "und-x-icu"`,
    defaultUrl: sql`default_url`,
    // Every matching link's daily rows are summed to order them: the cost grows with the account's links.
    clicks: allTimeClicks,
  };
  const directions = { asc: sql`ASC`, desc: sql`DESC` };
  const clicksColumn = sql`, ${allTimeClicks} AS clicks`;
  const noClicksColumn = sql``;

  /** A value bound as its column stores it: JSON columns hold null for none, tags an empty array. */
  const bind = (storage: Storage, value: unknown) => {
    if (storage === 'json') return value === undefined || value === null ? null : sql.json(value as never);
    if (storage === 'text[]') return sql.array((value as string[] | undefined) ?? [], TEXT_ARRAY);
    return value ?? null;
  };
  const fieldValues = (fields: LinkFields) => linkColumnValues(fields, bind);

  /** Conditions of a listing, as one SQL fragment over `links`. */
  const filterCondition = (userId: string, filter: LinkFilter) => {
    const conditions = [sql`user_id = ${userId}`];
    if (filter.tags?.length) conditions.push(sql`tags @> ${sql.array(filter.tags, TEXT_ARRAY)}`);
    if (filter.search) {
      const pattern = `%${escapeLike(filter.search)}%`;
      conditions.push(sql`(title ILIKE ${pattern} OR default_url ILIKE ${pattern} OR code ILIKE ${pattern})`);
    }
    return conditions.reduce((all, condition) => sql`${all} AND ${condition}`);
  };

  /**
   * Deletes the rollups of deleted links. The rollup tables have no foreign key onto links: checking
   * one on every row the worker writes cost as much as writing the row. The worker locks the links
   * it writes for instead, so the DELETE of the links waited for any such transaction; these
   * statements run after it, each with a fresh snapshot, and so also remove the rows it committed.
   */
  const deleteRollups = async (tx: TransactionSql, ids: string[]) => {
    for (const table of ['click_hourly', 'click_hourly_dimensions', 'click_daily', 'click_daily_dimensions', 'link_previews_hourly']) {
      await tx`DELETE FROM ${tx(table)} WHERE link_id = ANY(${tx.array(ids, UUID_ARRAY)})`;
    }
  };

  /**
   * Replaces every editable field of a link and bumps updatedAt, on the pool or within a
   * transaction; `passwordHash` replaces the password too (null removes it), undefined keeps it.
   */
  const replaceFields = async (
    db: Sql | TransactionSql,
    id: string,
    fields: LinkFields,
    passwordHash?: string | null,
  ): Promise<LinkRecord | undefined> => {
    const values = passwordHash === undefined ? fieldValues(fields) : { ...fieldValues(fields), password_hash: passwordHash };
    const [row] = await db`
      UPDATE links SET ${db(values)},
        -- Strictly after the previous value, even within the same clock tick.
        updated_at = greatest(clock_timestamp(), updated_at + interval '1 millisecond')
      WHERE id = ${id}
      RETURNING ${columns}`;
    return row && readLink(row);
  };

  return {
    /**
     * Inserts a link, on a custom domain when `domainId` is given, with the argon2id hash of its
     * password when it has one; throws ShortCodeTakenError when `code` is already in use on that domain.
     */
    async create(
      userId: string,
      code: string,
      fields: LinkFields,
      domainId: string | null = null,
      passwordHash: string | null = null,
    ): Promise<LinkRecord> {
      try {
        const values = { user_id: userId, code, domain_id: domainId, ...fieldValues(fields), password_hash: passwordHash };
        const [row] = await sql`INSERT INTO links ${sql(values)} RETURNING ${columns}`;
        return readLink(row!);
      } catch (error) {
        if (isUniqueViolation(error, 'links_code_key') || isUniqueViolation(error, 'links_domain_code_key'))
          throw new ShortCodeTakenError(code);
        throw error;
      }
    },

    /**
     * Inserts every link in one transaction and returns them in input order. A drawn code that is
     * taken is drawn again (up to `attempts` rounds); chosen codes that are taken throw
     * ShortCodesTakenError, and then nothing is created.
     */
    async createMany(userId: string, links: NewLink[], attempts = 5): Promise<LinkRecord[]> {
      return sql.begin(async (tx) => {
        const created = new Array<LinkRecord | undefined>(links.length);
        let pending = links.map((_, index) => index);
        for (let round = 0; pending.length > 0; round++) {
          const codes = pending.map((index) => {
            const { code } = links[index]!;
            return typeof code === 'string' ? code : code();
          });
          const rows = pending.map((index, i) => ({
            user_id: userId,
            code: codes[i]!,
            domain_id: links[index]!.domainId,
            ...fieldValues(links[index]!.fields),
            password_hash: links[index]!.passwordHash ?? null,
          }));
          // DO NOTHING instead of an error: a conflict would abort the whole transaction, and a
          // taken code (or the same code twice on one domain in the batch) only needs another draw.
          // No conflict target: codes are unique per domain through two partial indexes.
          const inserted = await tx`
            INSERT INTO links ${tx(rows)} ON CONFLICT DO NOTHING RETURNING ${columns}, domain_id AS "domainId"`;
          const place = (domainId: string | null, code: string) => `${domainId ?? ''}/${code}`;
          const byPlace = new Map(inserted.map(({ domainId, ...row }) => [place(domainId, row.code), readLink(row)]));
          const taken: number[] = [];
          pending.forEach((index, i) => {
            const key = place(links[index]!.domainId, codes[i]!);
            const row = byPlace.get(key);
            if (row) {
              created[index] = row;
              byPlace.delete(key);
            } else {
              taken.push(index);
            }
          });
          const chosen = taken.filter((index) => typeof links[index]!.code === 'string');
          // Throwing rolls the transaction back: none of the links stays.
          if (chosen.length > 0) throw new ShortCodesTakenError(chosen);
          if (taken.length > 0 && round + 1 >= attempts) throw new ShortCodeTakenError('no free short code');
          pending = taken;
        }
        return created as LinkRecord[];
      });
    },

    /** The links at `codes` on a custom domain (`domainId`) or the default one (null), whoever owns them. */
    async findByCodes(domainId: string | null, codes: string[]): Promise<LinkRecord[]> {
      if (codes.length === 0) return [];
      const inCodes = sql`code = ANY(${sql.array(codes, TEXT_ARRAY)})`;
      const rows =
        domainId === null
          ? await sql`SELECT ${columns} FROM links WHERE ${inCodes} AND domain_id IS NULL`
          : await sql`SELECT ${columns} FROM links WHERE ${inCodes} AND domain_id = ${domainId}`;
      return rows.map(readLink);
    },

    /**
     * Inserts imported links within `tx`, each at its own code and with its source's creation time
     * when known. A code taken meanwhile is skipped (the row is not in the answer) rather than
     * failing the transaction.
     */
    async insertImported(
      tx: TransactionSql,
      userId: string,
      domainId: string | null,
      links: { code: string; fields: LinkFields; createdAt?: Date }[],
    ): Promise<LinkRecord[]> {
      if (links.length === 0) return [];
      const now = new Date();
      const rows = links.map(({ code, fields, createdAt }) => ({
        user_id: userId,
        code,
        domain_id: domainId,
        created_at: createdAt ?? now,
        ...fieldValues(fields),
      }));
      const inserted = await tx`INSERT INTO links ${tx(rows)} ON CONFLICT DO NOTHING RETURNING ${columns}`;
      return inserted.map(readLink);
    },

    /** Replaces every editable field of each link within `tx`, as update does; answers the links updated. */
    async updateImported(tx: TransactionSql, links: { id: string; fields: LinkFields }[]): Promise<LinkRecord[]> {
      const updated: LinkRecord[] = [];
      for (const { id, fields } of links) {
        const record = await replaceFields(tx, id, fields);
        if (record) updated.push(record);
      }
      return updated;
    },

    /**
     * Inserts the link of an FDL link's parameters (see dynamicLinkKey), on a custom domain when
     * `domainId` is given. undefined when the code or the key is taken on that domain: the caller
     * looks the key up, and draws another code when no link has it.
     */
    async createDynamicLink(
      userId: string,
      code: string,
      fields: LinkFields,
      domainId: string | null,
      dynamicLinkKey: string,
    ): Promise<LinkRecord | undefined> {
      const values = { user_id: userId, code, domain_id: domainId, dynamic_link_key: dynamicLinkKey, ...fieldValues(fields) };
      // DO NOTHING, not an error, whichever unique index conflicts (the code's or the key's): a
      // concurrent insert of the same key waits here for the other to commit, then finds its row.
      const [row] = await sql`INSERT INTO links ${sql(values)} ON CONFLICT DO NOTHING RETURNING ${columns}`;
      return row && readLink(row);
    },

    /** The link of an FDL link's key: the user's on the default domain (domainId null), or the one on the custom domain. */
    async findByDynamicLinkKey(userId: string, domainId: string | null, dynamicLinkKey: string): Promise<LinkRecord | undefined> {
      const [row] =
        domainId === null
          ? await sql`SELECT ${columns} FROM links WHERE user_id = ${userId} AND domain_id IS NULL AND dynamic_link_key = ${dynamicLinkKey}`
          : await sql`
            SELECT ${columns} FROM links WHERE user_id = ${userId} AND domain_id = ${domainId} AND dynamic_link_key = ${dynamicLinkKey}`;
      return row && readLink(row);
    },

    /** How many links FDL parameters made on a custom domain, counted up to `limit` (so the count costs at most that). */
    async countDynamicLinks(domainId: string, limit: number): Promise<number> {
      const [row] = await sql<{ count: number }[]>`
        SELECT count(*)::int AS count FROM (
          SELECT 1 FROM links WHERE domain_id = ${domainId} AND dynamic_link_key IS NOT NULL LIMIT ${limit}
        ) AS made`;
      return row!.count;
    },

    async findById(id: string): Promise<LinkRecord | undefined> {
      if (!isUuid(id)) return undefined;
      const [row] = await sql`SELECT ${columns} FROM links WHERE id = ${id}`;
      return row && readLink(row);
    },

    /** The link of a code on the default domain, or on the active custom domain `hostname`. */
    /** The owner of each of these links that exists, by link id (a link's owner never changes). */
    async ownersOf(ids: readonly string[]): Promise<Map<string, string>> {
      if (ids.length === 0) return new Map();
      const rows = await sql<{ id: string; userId: string }[]>`
        SELECT id, user_id AS "userId" FROM links WHERE id = ANY(${sql.array([...ids], UUID_ARRAY)})`;
      return new Map(rows.map((row) => [row.id, row.userId]));
    },

    async findByCode(code: string, hostname?: string): Promise<LinkRecord | undefined> {
      const [row] =
        hostname === undefined
          ? await sql`SELECT ${columns} FROM links WHERE code = ${code} AND domain_id IS NULL`
          : await sql`
            SELECT ${columns} FROM links
            WHERE code = ${code} AND domain_id = (SELECT id FROM domains WHERE hostname = ${hostname} AND verified_at IS NOT NULL)`;
      return row && readLink(row);
    },

    /** The link a cache id names (see linkCacheId). */
    async findByCacheId(id: string): Promise<LinkRecord | undefined> {
      const { code, hostname } = parseLinkCacheId(id);
      return this.findByCode(code, hostname);
    },

    /**
     * Replaces every editable field (the caller has already merged the changes) and bumps
     * updatedAt; `passwordHash` sets the password (null removes it), undefined keeps it.
     */
    async update(id: string, fields: LinkFields, passwordHash?: string | null): Promise<LinkRecord | undefined> {
      return replaceFields(sql, id, fields, passwordHash);
    },

    /** Deletes a link and its rollups in one transaction; returns the deleted row's cache id (see linkCacheId). */
    async delete(id: string): Promise<string | undefined> {
      return sql.begin(async (tx) => {
        const [row] = await tx<{ code: string; domain: string | null }[]>`
          DELETE FROM links WHERE id = ${id} RETURNING code, (SELECT hostname FROM domains d WHERE d.id = links.domain_id) AS domain`;
        if (!row) return undefined;
        await deleteRollups(tx, [id]);
        return linkCacheId(row.code, row.domain);
      });
    },

    /**
     * Deletes those of `ids` that exist, with their rollups, in one transaction, and returns their
     * cache ids (see linkCacheId). Throws ForeignLinksError, deleting nothing, when any of them is another user's.
     * Malformed and unknown ids are skipped.
     */
    async deleteOwned(userId: string, ids: string[]): Promise<{ id: string; cacheId: string }[]> {
      const wellFormed = [...new Set(ids.filter(isUuid))];
      if (wellFormed.length === 0) return [];
      return sql.begin(async (tx) => {
        const rows = await tx<{ id: string; userId: string; code: string; domain: string | null }[]>`
          DELETE FROM links WHERE id = ANY(${tx.array(wellFormed, UUID_ARRAY)})
          RETURNING id, user_id AS "userId", code, (SELECT hostname FROM domains d WHERE d.id = links.domain_id) AS domain`;
        const foreign = rows.filter((row) => row.userId !== userId).map((row) => row.id);
        // Throwing rolls the whole transaction back: the caller's own links stay too.
        if (foreign.length > 0) throw new ForeignLinksError(foreign);
        await deleteRollups(
          tx,
          rows.map((row) => row.id),
        );
        return rows.map((row) => ({ id: row.id, cacheId: linkCacheId(row.code, row.domain) }));
      });
    },

    /**
     * One page of a user's links matching `filter`, with the total count, sorted by a whitelisted
     * column; with `withClicks`, each link's all-time clicks (from the daily rollups) too.
     */
    async listByUser(
      userId: string,
      page: { offset: number; limit: number; sortBy: LinkSortField; direction: 'asc' | 'desc' },
      filter: LinkFilter = {},
      withClicks = false,
    ): Promise<LinkListPage> {
      const direction = directions[page.direction];
      const where = filterCondition(userId, filter);
      const [rows, [count]] = await Promise.all([
        sql`
          SELECT ${columns} ${withClicks ? clicksColumn : noClicksColumn} FROM links WHERE ${where}
          ORDER BY ${sortKeys[page.sortBy]} ${direction}, id ${direction}
          LIMIT ${page.limit} OFFSET ${page.offset}`,
        sql<{ total: number }[]>`SELECT count(*)::int AS total FROM links WHERE ${where}`,
      ]);
      // `clicks`, when selected, stays on the row beside the link's fields.
      const links = rows.map((row) => readLink(row) as LinkRecord & { clicks?: number });
      return { links, total: count?.total ?? 0 };
    },

    /** A user's links whose iosLink opens `bundleId`: their cached records name the registered app. */
    async listByIosBundle(userId: string, bundleId: string): Promise<LinkRecord[]> {
      const rows = await sql`SELECT ${columns} FROM links WHERE user_id = ${userId} AND ios_link->>'bundleId' = ${bundleId}`;
      return rows.map(readLink);
    },

    /** Id, title, short code and custom domain (null: the default one) of each of a user's links (those carrying `tag` when given), oldest first. */
    async exportTargets(userId: string, tag?: string): Promise<{ id: string; title: string; code: string; domain: string | null }[]> {
      return sql<{ id: string; title: string; code: string; domain: string | null }[]>`
        SELECT id, title, code, (SELECT d.hostname FROM domains d WHERE d.id = links.domain_id) AS domain
        FROM links WHERE ${filterCondition(userId, { tags: tag === undefined ? undefined : [tag] })}
        ORDER BY created_at, id`;
    },

    /** Every tag of a user's links with the number of links carrying it, by name. */
    async tagCounts(userId: string): Promise<{ name: string; links: number }[]> {
      return sql<{ name: string; links: number }[]>`
        SELECT tag AS name, count(*)::int AS links
        FROM links, unnest(tags) AS tag
        WHERE user_id = ${userId}
        GROUP BY tag ORDER BY tag COLLATE "C"`;
    },

    /** The cache ids of the links on a custom domain, to drop them from the link cache when it stops being active. */
    async cacheIdsOnDomain(domainId: string): Promise<string[]> {
      const rows = await sql<{ id: string }[]>`
        SELECT d.hostname || '/' || l.code AS id FROM links l JOIN domains d ON d.id = l.domain_id WHERE l.domain_id = ${domainId}`;
      return rows.map((row) => row.id);
    },

    /**
     * Every link that a redirector serves (on the default domain or an active custom one), a page at
     * a time in (code, id) order (a code may repeat across domains), for rebuilding the Redis link cache.
     */
    async *allInBatches(batchSize = 1000): AsyncGenerator<LinkRecord[]> {
      let after = { code: '', id: '00000000-0000-0000-0000-000000000000' };
      for (;;) {
        const rows = (
          await sql`
          SELECT ${columns} FROM links
          WHERE (code, id) > (${after.code}, ${after.id}::uuid)
            AND (domain_id IS NULL OR EXISTS (SELECT 1 FROM domains d WHERE d.id = links.domain_id AND d.verified_at IS NOT NULL))
          ORDER BY code, id LIMIT ${batchSize}`
        ).map(readLink);
        if (rows.length === 0) return;
        yield rows;
        after = rows.at(-1)!;
      }
    },
  };
}
export type LinksRepository = ReturnType<typeof linksRepository>;
