// RFC 4180: a field holding a comma, a double quote or a line break is quoted, quotes doubled. A
// semicolon too: spreadsheets in locales that separate with `;` would split the field there.
const NEEDS_QUOTES = /[",;\r\n]/;
// OWASP's rule against formula injection: a spreadsheet runs a cell that starts with one of these,
// or with `;` and one of these (read with `;` as the separator, the formula is a cell of its own).
const FORMULA_START = /^;?[=+\-@\t\r]/;

/**
 * One CSV field, quoted only when it has to be. Text that a spreadsheet would read as a formula
 * (a visitor's Referer host such as `=hyperlink(…)`) gets a leading `'`, which spreadsheets show
 * as text; numbers are written as they are.
 */
export const csvField = (value: string | number): string => {
  const text = typeof value === 'string' && FORMULA_START.test(value) ? `'${value}` : String(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/** One CSV record with its CRLF terminator. */
export const csvLine = (fields: readonly (string | number)[]): string => `${fields.map(csvField).join(',')}\r\n`;
