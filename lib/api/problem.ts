// Errors as HTTP for the agent API and the console's routes: any thrown value as a problem document
// (lib/core/problem.ts holds the types and the answers), with unexpected ones logged.
import { isConnectionLoss } from '../db/connection-loss.ts';
import { LedgerError } from '../core/errors.ts';
import { PROBLEM_TYPES, problem, type Problem } from '../core/problem.ts';
import { componentLogger } from '../ops/log.ts';

export * from '../core/problem.ts';

/** The problem for any thrown value. Unknown errors become a 500 that shows no internals. */
export function problemFrom(error: unknown): Problem {
  if (error instanceof LedgerError) {
    const { field, ...details } = error.details;
    return problem(error.code, error.message, typeof field === 'string' ? { field, ...details } : details);
  }
  if (isConnectionLoss(error)) {
    return problem('unavailable', 'the database cannot be reached right now: nothing was changed; retry shortly');
  }
  // One JSON line with the stack inside it (a log shipper reads one object per line).
  componentLogger('api', true).error({ err: error }, 'unexpected error');
  return problem('internal', PROBLEM_TYPES.internal.when);
}
