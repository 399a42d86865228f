// zod input parsing that turns the first issue into a LedgerError naming the field (422).
import type { z } from 'zod';
import { invalid } from './errors.ts';

export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.length ? issue.path.join('.') : 'body';
  throw invalid(field, `${field}: ${issue.message}`, {
    issues: result.error.issues.map((i) => ({ field: i.path.join('.') || 'body', message: i.message })),
  });
}
