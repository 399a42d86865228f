export type SP = Record<string, string | string[] | undefined>;

/** One search parameter, trimmed; NUL characters (which PostgreSQL text cannot hold) are dropped. */
export function one(sp: SP, key: string): string | undefined {
  const v = sp[key];
  const s = (Array.isArray(v) ? v[0] : v)?.replace(/\u0000/g, '');
  return s && s.trim() ? s.trim() : undefined;
}

/** A link to the same page with some parameters changed (undefined removes one). */
export function withParams(path: string, sp: SP, changes: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(sp)) {
    const s = Array.isArray(v) ? v[0] : v;
    if (s) params.set(k, s);
  }
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === '') params.delete(k);
    else params.set(k, v);
  }
  const q = params.toString();
  return q ? `${path}?${q}` : path;
}

/** Rows a list page shows: 25 unless the URL asks for one of the larger sizes. A page's cost to the
 *  server grows with its rows (docs/BENCHMARKS.md, operator pages), so the default stays small. */
export const PAGE_SIZES = [25, 50, 100] as const;
export function pageSize(sp: SP): number {
  const asked = Number(one(sp, 'rows'));
  return (PAGE_SIZES as readonly number[]).includes(asked) ? asked : PAGE_SIZES[0];
}
