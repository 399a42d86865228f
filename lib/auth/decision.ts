// One path for every decision a person takes, from any door (Z2, Z8, A1): the console's server actions
// and the management API (lib/manage) both run a Decision through runDecision, so the input schema,
// the guard, the version check and the command's audit are the same whichever way the person came.
import type { z } from 'zod';
import { auditRefusal } from '../audit/append.ts';
import { invalid } from '../core/errors.ts';
import type { SeenRequirement } from '../ledger/seen-required.ts';
import { parseInput } from '../ledger/validate.ts';
import { authorize, toActionError, type ActionResult, type Guarded, type Subject } from './guard.ts';
import type { Permission } from '../core/permissions.ts';
import { currentRequest, type RequestInfo } from './request.ts';

/** What a person decides or configures, wherever they do it from (a console server action, the
 *  management API): the permission it needs, the command's input schema, the subject the guard checks
 *  workflows on, the version it must name (Z8) and the command itself, which audits in the same
 *  transaction as the change. app/actions and lib/manage run the same Decision through runDecision. */
export interface Decision<S extends z.ZodType, T> {
  permission: Permission;
  schema: S;
  run: (g: Guarded, input: z.output<S>) => Promise<T>;
  subject?: (input: z.output<S>) => Subject;
  seen?: SeenRequirement<z.output<S>>;
  passwordChange?: boolean;
}

/**
 * Authorize + run a decision + audit, in one place for every door: parse the input with the
 * command's schema (a bad field is named), authorize with the permission table, refuse a blind
 * decision (Z8), run. Returns a result object instead of throwing, so a form can show the message
 * next to the field and the API can answer it as a problem document.
 */
export async function runDecision<S extends z.ZodType, T>(
  info: RequestInfo,
  decision: Decision<S, T>,
  raw: unknown,
): Promise<ActionResult<T>> {
  try {
    let input: z.output<S> | undefined;
    let parseError: unknown;
    try {
      input = parseInput(decision.schema, raw);
    } catch (error) {
      parseError = error;
    }
    // The guard fills in the subject's run, under which a refusal after it is audited too.
    const about = input !== undefined && decision.subject ? decision.subject(input) : undefined;
    const g = await authorize(info, decision.permission, {
      mutating: true,
      subject: about,
      passwordChange: decision.passwordChange,
    });
    if (parseError) throw parseError;
    if (decision.seen) await refuseBlindDecision(g, decision.permission, about, decision.seen(input as z.output<S>));
    return { ok: true, data: await decision.run(g, input as z.output<S>) };
  } catch (error) {
    return toActionError(error);
  }
}

/** A server action body: runDecision with the current request's session. */
export async function consoleAction<S extends z.ZodType, T>(
  permission: Permission,
  schema: S,
  raw: unknown,
  run: (g: Guarded, input: z.output<S>) => Promise<T>,
  subject?: (input: z.output<S>) => Subject,
  options: { passwordChange?: boolean; seen?: SeenRequirement<z.output<S>> } = {},
): Promise<ActionResult<T>> {
  return consoleDecision({ permission, schema, run, subject, ...options }, raw);
}

/** A console server action running a shared Decision (lib/manage/decisions.ts). */
export async function consoleDecision<S extends z.ZodType, T>(
  decision: Decision<S, T>,
  raw: unknown,
): Promise<ActionResult<T>> {
  let info: RequestInfo;
  try {
    info = await currentRequest();
  } catch (error) {
    return toActionError(error);
  }
  return runDecision(info, decision, raw);
}

/**
 * Z8: a person's decision that names no version of what it decides on is refused (422 naming the
 * field) after authorization, with nothing written but its refusal on the subject's `refused:` chain
 * (A4), as every other refused attempt.
 */
export async function refuseBlindDecision(
  g: Guarded,
  permission: Permission,
  subject: Subject | undefined,
  missing: ReturnType<SeenRequirement<never>>,
): Promise<void> {
  if (!missing) return;
  const about = subject ?? { type: 'console' as const, id: permission };
  await auditRefusal(g.db, {
    chain: `${about.type}:${about.id}`,
    actor: g.actor,
    action: permission,
    subjectType: about.type,
    subjectId: about.id,
    runId: about.runId ?? null,
    why: missing.message,
    request: g.request,
  });
  throw invalid(missing.field, missing.message, missing.keys ? { keys: missing.keys } : {});
}
