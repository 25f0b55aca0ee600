import type { LinkFields, LinkSortField, AndroidLink, IosLink } from '../schemas/links.js';
import type { Sql } from './client.js';
import { isUuid } from './uuid.js';

export interface LinkRecord {
  id: string;
  userId: string;
  code: string;
  title: string;
  defaultUrl: string;
  androidLink: AndroidLink | null;
  iosLink: IosLink | null;
  desktopUrl: string | null;
  customParameters: Record<string, string> | null;
  expiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface LinkListPage {
  links: LinkRecord[];
  total: number;
}

/** Thrown by create when the short code is taken, so the caller can pick another. */
export class ShortCodeTakenError extends Error {
  override name = 'ShortCodeTakenError';
}

const SORT_COLUMNS: Record<LinkSortField, string> = {
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  title: 'title',
  defaultUrl: 'default_url',
};

const columns = (sql: Sql) => sql`
  id, user_id AS "userId", code, title, default_url AS "defaultUrl", android_link AS "androidLink",
  ios_link AS "iosLink", desktop_url AS "desktopUrl", custom_parameters AS "customParameters",
  expires_at AS "expiresAt", created_at AS "createdAt", updated_at AS "updatedAt"`;

const isUniqueViolation = (error: unknown, constraint: string) =>
  typeof error === 'object' && error !== null && 'code' in error && error.code === '23505' &&
  'constraint_name' in error && error.constraint_name === constraint;

/** Links: the management rows. SQL for links lives here and nowhere else. */
export function linksRepository(sql: Sql) {
  const json = (value: unknown) => (value === undefined || value === null ? null : sql.json(value as never));
  const fieldValues = (fields: LinkFields) => ({
    title: fields.title,
    default_url: fields.defaultUrl,
    android_link: json(fields.androidLink),
    ios_link: json(fields.iosLink),
    desktop_url: fields.desktopUrl ?? null,
    custom_parameters: json(fields.customParameters),
    expires_at: fields.expirationDate ?? null,
  });

  return {
    /** Inserts a link; throws ShortCodeTakenError when `code` is already in use. */
    async create(userId: string, code: string, fields: LinkFields): Promise<LinkRecord> {
      try {
        const values = { user_id: userId, code, ...fieldValues(fields) };
        const [row] = await sql<LinkRecord[]>`INSERT INTO links ${sql(values)} RETURNING ${columns(sql)}`;
        return row!;
      } catch (error) {
        if (isUniqueViolation(error, 'links_code_key')) throw new ShortCodeTakenError(code);
        throw error;
      }
    },

    async findById(id: string): Promise<LinkRecord | undefined> {
      if (!isUuid(id)) return undefined;
      const [row] = await sql<LinkRecord[]>`SELECT ${columns(sql)} FROM links WHERE id = ${id}`;
      return row;
    },

    async findByCode(code: string): Promise<LinkRecord | undefined> {
      const [row] = await sql<LinkRecord[]>`SELECT ${columns(sql)} FROM links WHERE code = ${code}`;
      return row;
    },

    /** Replaces every editable field (the caller has already merged the changes) and bumps updatedAt. */
    async update(id: string, fields: LinkFields): Promise<LinkRecord | undefined> {
      const [row] = await sql<LinkRecord[]>`
        UPDATE links SET ${sql(fieldValues(fields))},
          -- Strictly after the previous value, even within the same clock tick.
          updated_at = greatest(clock_timestamp(), updated_at + interval '1 millisecond')
        WHERE id = ${id}
        RETURNING ${columns(sql)}`;
      return row;
    },

    /** Deletes a link and its rollups in one transaction; returns the deleted row's code. */
    async delete(id: string): Promise<string | undefined> {
      return sql.begin(async (tx) => {
        const [row] = await tx<{ code: string }[]>`DELETE FROM links WHERE id = ${id} RETURNING code`;
        if (!row) return undefined;
        // The rollup tables have no foreign key onto links: checking one on every row the worker
        // writes cost as much as writing the row. The worker locks the links it writes for
        // instead, so the DELETE above waited for any such transaction; these statements run after
        // it, each with a fresh snapshot, and so also remove the rows it committed.
        await tx`DELETE FROM click_hourly WHERE link_id = ${id}`;
        await tx`DELETE FROM click_hourly_dimensions WHERE link_id = ${id}`;
        await tx`DELETE FROM click_daily WHERE link_id = ${id}`;
        await tx`DELETE FROM click_daily_dimensions WHERE link_id = ${id}`;
        return row.code;
      });
    },

    /** One page of a user's links, with the total count, sorted by a whitelisted column. */
    async listByUser(
      userId: string,
      page: { offset: number; limit: number; sortBy: LinkSortField; direction: 'asc' | 'desc' },
    ): Promise<LinkListPage> {
      const column = sql(SORT_COLUMNS[page.sortBy]);
      const direction = page.direction === 'asc' ? sql`ASC` : sql`DESC`;
      const [links, [count]] = await Promise.all([
        sql<LinkRecord[]>`
          SELECT ${columns(sql)} FROM links WHERE user_id = ${userId}
          ORDER BY ${column} ${direction}, id ${direction}
          LIMIT ${page.limit} OFFSET ${page.offset}`,
        sql<{ total: number }[]>`SELECT count(*)::int AS total FROM links WHERE user_id = ${userId}`,
      ]);
      return { links, total: count?.total ?? 0 };
    },

    /** Every link, a page at a time in code order, for rebuilding the Redis link cache. */
    async *allInBatches(batchSize = 1000): AsyncGenerator<LinkRecord[]> {
      let after = '';
      for (;;) {
        const rows = await sql<LinkRecord[]>`
          SELECT ${columns(sql)} FROM links WHERE code > ${after} ORDER BY code LIMIT ${batchSize}`;
        if (rows.length === 0) return;
        yield rows;
        after = rows.at(-1)!.code;
      }
    },
  };
}
export type LinksRepository = ReturnType<typeof linksRepository>;
