// zod input parsing that turns the first issue into a LedgerError naming the field (422).
import type { z } from 'zod';
import { invalid } from './errors.ts';

export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) {
    const nul = findNul(result.data, []);
    if (nul) throw invalid(nul, `${nul}: text may not contain NUL characters`);
    return result.data;
  }
  const issues = result.error.issues.map((i) => ({ field: fieldOf(i), message: i.message }));
  const first = issues[0]!;
  throw invalid(first.field, `${first.field}: ${first.message}`, { issues });
}

// A strict schema reports extra fields (a model's subject or body, K1) with the path of the object
// that holds them; the field at fault is the extra key itself, so name it.
function fieldOf(issue: z.core.$ZodIssue): string {
  const path = issue.code === 'unrecognized_keys' && issue.keys.length ? [...issue.path, issue.keys[0]!] : issue.path;
  return path.length ? path.map(String).join('.') : 'body';
}

// PostgreSQL text and jsonb cannot hold U+0000: refuse it here with the field's name instead of a
// database error later (found by the API's malformed-body fuzz), in values and in keys alike.
export function findNul(value: unknown, path: (string | number)[]): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path.join('.') || 'body' : null;
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array || value instanceof Date) return null;
  for (const [k, v] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    if (typeof k === 'string' && k.includes('\u0000')) return [...path, k].join('.');
    const hit = findNul(v, [...path, k]);
    if (hit) return hit;
  }
  return null;
}
