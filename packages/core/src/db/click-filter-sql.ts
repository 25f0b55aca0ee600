import type postgres from 'postgres';
import { type AnalyticsFilter, appEventsFollow } from '../analytics/filters.js';
import type { Sql } from './client.js';

/** The conditions as one fragment, each led by AND; empty for none (postgres.js would send an empty array as a value). */
const allOf = (sql: Sql, conditions: postgres.Fragment[]): postgres.Fragment =>
  conditions.reduce((joined, condition) => sql`${joined} AND ${condition}`, sql``);

/**
 * ` AND …` conditions matching the filter on the combination rollups, whose columns are named after
 * the dimensions. Column names come from the registry, values are parameters.
 */
export const combinationConditions = (sql: Sql, filter: AnalyticsFilter): postgres.Fragment =>
  allOf(
    sql,
    filter.map(({ dimension, negated, values }) =>
      negated ? sql`${sql(dimension)} <> ALL(${values}::text[])` : sql`${sql(dimension)} = ANY(${values}::text[])`,
    ),
  );

/**
 * ` AND …` conditions on the app event rollups' platform (ANDROID, IOS, DESKTOP, OTHER) when the
 * events follow the filter (appEventsFollow: platform filters only); none otherwise.
 */
export const appEventConditions = (sql: Sql, filter: AnalyticsFilter): postgres.Fragment =>
  allOf(
    sql,
    appEventsFollow(filter)
      ? filter.map(({ negated, values }) => {
          const platforms = values.map((value) => value.toUpperCase());
          return negated ? sql`platform <> ALL(${platforms}::text[])` : sql`platform = ANY(${platforms}::text[])`;
        })
      : [],
  );
