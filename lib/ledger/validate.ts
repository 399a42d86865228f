// zod input parsing that turns the first issue into a LedgerError naming the field (422).
import type { z } from 'zod';
import { invalid } from './errors.ts';

export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
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
