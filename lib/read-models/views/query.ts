// A page's search parameters as the read models take them, whether a server page received them or a
// console view route read them off its URL: one place trims them and picks the page size.
export type SP = Record<string, string | string[] | undefined>;

/** One search parameter, trimmed; NUL characters (which PostgreSQL text cannot hold) are dropped. */
export function one(sp: SP, key: string): string | undefined {
  const v = sp[key];
  const s = (Array.isArray(v) ? v[0] : v)?.replace(/\u0000/g, '');
  return s && s.trim() ? s.trim() : undefined;
}

/** Rows a list page shows: 25 unless the URL asks for one of the larger sizes. A page's cost to the
 *  server grows with its rows (docs/BENCHMARKS.md, operator pages), so the default stays small. */
export const PAGE_SIZES = [25, 50, 100] as const;
export function pageSize(sp: SP): number {
  const asked = Number(one(sp, 'rows'));
  return (PAGE_SIZES as readonly number[]).includes(asked) ? asked : PAGE_SIZES[0];
}

/** The first value of each parameter of a URL. */
export function searchParamsOf(params: URLSearchParams): SP {
  const sp: SP = {};
  for (const [k, v] of params) if (!(k in sp)) sp[k] = v;
  return sp;
}
