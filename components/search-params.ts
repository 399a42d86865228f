import type { SP } from '@/lib/read-models/views/query.ts';

export { one, pageSize, PAGE_SIZES, searchParamsOf, type SP } from '@/lib/read-models/views/query.ts';

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
