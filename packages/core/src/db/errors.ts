/** True for PostgreSQL's unique violation of `constraint` (a unique index or constraint, by name). */
export const isUniqueViolation = (error: unknown, constraint: string): boolean =>
  typeof error === 'object' &&
  error !== null &&
  'code' in error &&
  error.code === '23505' &&
  'constraint_name' in error &&
  error.constraint_name === constraint;

/** True for PostgreSQL's foreign-key violation of `constraint`. */
export const isForeignKeyViolation = (error: unknown, constraint: string): boolean =>
  typeof error === 'object' &&
  error !== null &&
  'code' in error &&
  error.code === '23503' &&
  'constraint_name' in error &&
  error.constraint_name === constraint;
