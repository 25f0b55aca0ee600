const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs in the database; anything else cannot name a row, so lookups short-circuit. */
export const isUuid = (value: string): boolean => UUID.test(value);
