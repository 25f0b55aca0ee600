// RFC 4180: a field holding a comma, a double quote or a line break is quoted, quotes doubled.
const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV field, quoted only when it has to be. */
export const csvField = (value: string | number): string => {
  const text = String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/** One CSV record with its CRLF terminator. */
export const csvLine = (fields: readonly (string | number)[]): string => `${fields.map(csvField).join(',')}\r\n`;
