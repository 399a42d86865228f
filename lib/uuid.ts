// What a UUID looks like as text. Ids read from URLs, tokens and filters are checked with it before a
// `::uuid` cast: text that passes is text PostgreSQL accepts, so a malformed id is "not found" or a
// 422, never a failed statement.
export const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_TEXT.test(value);
}
