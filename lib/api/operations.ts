// What a runtime may do, in one place for both doors: the HTTP route handlers and the SDK's direct
// (in-process) transport call these. Each parses its input and delegates to a ledger command, which
// authorizes the runtime for the workflow of the run or effect it names (Z6; refusals audited, A4).
import type { Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../core/actor.ts';
import {
  checkReplay,
  claimEffect,
  completeTransition,
  startClaimPeek,
  createRun,
  failTransition,
  stuckTransition,
  unknownTransition,
  recordResponse,
  revokeByDeletion,
  submitPlan,
  transitionEffect,
  type TransitionRequest,
} from '../ledger/index.ts';
import { LedgerError } from '../core/errors.ts';
import type { HeldRow } from '../ledger/commands/peek-claim.ts';
import { problem } from './problem.ts';
import { answerWithTransition } from './answer-with-transition.ts';
import {
  outcomeAnswer,
  reportInOneStatement,
  type OneStatementReport,
  type PresentedKey,
} from './outcome-statement.ts';
import { readRun } from '../read-models/run-view.ts';
import { readEffect, readEffectInput } from '../read-models/effect-view.ts';
import { parseInput } from '../ledger/validate.ts';
import { requireEffectScope, requireRunScope } from '../ledger/scope.ts';
import type { z } from 'zod';
import { attemptParams, runParams } from './params.ts';
import {
  attemptResponseBody,
  claimBody,
  createRunBody,
  deletionBody,
  outcomeBody,
  replayBody,
  submitPlanBody,
} from './schemas.ts';

export interface OpContext {
  db: Db;
  actor: Actor;
  request?: RequestMeta;
  /** The Idempotency-Key record reserved for this request (Z5), which an operation may complete with
   *  its answer in its own statement (reported back as `stored`). */
  answerRecord?: string;
}

/** An operation's answer: the HTTP status and the JSON body (the direct transport sees the same). */
export interface OpResult<T = unknown> {
  status: number;
  body: T;
  /** The answer the operation's own statement stored with `answerRecord`, when it did. */
  stored?: { status: number; body: unknown } | null;
}

export async function opCreateRun(ctx: OpContext, body: z.input<typeof createRunBody>): Promise<OpResult> {
  const input = parseInput(createRunBody, body);
  return { status: 201, body: await createRun(ctx, input) };
}

export async function opSubmitPlan(
  ctx: OpContext,
  runId: string,
  body: z.input<typeof submitPlanBody>,
): Promise<OpResult> {
  const input = parseInput(submitPlanBody, body);
  parseInput(runParams, { runId });
  return { status: 201, body: await submitPlan(ctx, { runId, items: input.items }) };
}

export async function opReadRun(ctx: OpContext, runId: string): Promise<OpResult> {
  parseInput(runParams, { runId });
  await requireRunScope(ctx, runId, 'run.read');
  return { status: 200, body: await readRun(ctx, { runId }) };
}

export async function opReadEffect(ctx: OpContext, key: string): Promise<OpResult> {
  parseInput(readEffectInput, { key });
  await requireEffectScope(ctx, key, { action: 'effect.read', subjectType: 'effect' });
  return { status: 200, body: await readEffect(ctx, { key }) };
}

export async function opReplay(ctx: OpContext, runId: string, body: unknown = {}): Promise<OpResult> {
  parseInput(replayBody, body ?? {});
  parseInput(runParams, { runId });
  const check = await checkReplay(ctx, { runId });
  if (check.blocked) {
    return {
      status: 409,
      body: problem('conflict', check.reason, { blocking: check.blocking, targets: check.targets }),
    };
  }
  return { status: 202, body: { runId: check.runId, proceed: check.proceed, skip: check.skip } };
}

export async function opClaim(ctx: OpContext, body: z.input<typeof claimBody>): Promise<OpResult> {
  const input = parseInput(claimBody, body);
  const result = await claimEffect(ctx, input);
  const stored = result.answer && { stored: result.answer };
  if (result.claimed) {
    const { key, epoch, attemptId, idempotencyKey } = result;
    return { status: 201, body: { claimed: true, key, epoch, attemptId, idempotencyKey }, ...stored };
  }
  return { ...claimLostAnswer(result), ...stored };
}

/**
 * A claim of a held key answered from its held row, read by the statement that authenticates the
 * caller (lib/api/held-claim.ts). Two steps: the first needs no caller and names the claim key and
 * its run's workflow; the second checks the authenticated caller and answers (null when the claim
 * must run: it may win).
 */
export async function opStartPeekClaim(db: Db, body: z.input<typeof claimBody>) {
  const start = await startClaimPeek(db, parseInput(claimBody, body));
  return {
    key: start.key,
    workflow: start.workflow,
    finish: async (ctx: OpContext, held: HeldRow | undefined): Promise<OpResult | null> => {
      const answer = await start.finish(ctx, held);
      return answer && claimLostAnswer(answer);
    },
  };
}

function claimLostAnswer(result: Extract<Awaited<ReturnType<typeof claimEffect>>, { claimed: false }>): OpResult {
  const { key, epoch, state, changedBy, changedAt } = result;
  return { status: 200, body: { claimed: false, key, epoch, state, changedBy, changedAt } };
}

const OUTCOME_TRANSITIONS = {
  done: completeTransition,
  failed: failTransition,
  unknown: unknownTransition,
  stuck: stuckTransition,
} as const;

/** The transition an outcome report asks for (the raw response decoded: R1). */
function outcomeTransition(input: z.output<typeof outcomeBody>): TransitionRequest {
  const { outcome, response, ...fields } = input;
  const rest = { ...fields, response: response && decodeRawResponse(response, 'response.bodyBase64') };
  return OUTCOME_TRANSITIONS[outcome](rest);
}

export async function opOutcome(ctx: OpContext, body: z.input<typeof outcomeBody>): Promise<OpResult> {
  const req = outcomeTransition(parseInput(outcomeBody, body));
  // The answer goes into the request's Idempotency-Key record in the transition's own statement.
  const alongside = ctx.answerRecord ? answerWithTransition(ctx.answerRecord, req.key) : undefined;
  const result = await transitionEffect(ctx, req, alongside);
  const answer = outcomeAnswer(result);
  const stored = result.alongside as { status: number; body: unknown } | null | undefined;
  return stored ? { status: 200, body: answer, stored } : { status: 200, body: answer };
}

/** opOutcome for the agent API in one statement with the caller's key check and its Idempotency-Key
 *  record (outcome-statement.ts); `body` is already parsed. */
export function opOutcomeInOneStatement(
  db: Db,
  meta: RequestMeta,
  body: z.output<typeof outcomeBody>,
  caller: PresentedKey,
  idempotency: { key: string; hash: string },
): Promise<OneStatementReport> {
  return reportInOneStatement(db, caller, idempotency, meta, outcomeTransition(body));
}

export async function opDeletion(ctx: OpContext, body: z.input<typeof deletionBody>): Promise<OpResult> {
  const input = parseInput(deletionBody, body);
  return { status: 200, body: await revokeByDeletion(ctx, input) };
}

export async function opAttemptResponse(
  ctx: OpContext,
  attemptId: string,
  body: z.input<typeof attemptResponseBody>,
): Promise<OpResult> {
  const input = parseInput(attemptResponseBody, body);
  parseInput(attemptParams, { attemptId });
  return {
    status: 201,
    body: await recordResponse(ctx, { attemptId, ...decodeRawResponse(input) }),
  };
}

/** A raw response from the wire: the body arrives as canonical base64 and is stored as the bytes. */
function decodeRawResponse(wire: z.output<typeof attemptResponseBody>, field = 'bodyBase64') {
  const bytes = Buffer.from(wire.bodyBase64, 'base64');
  if (bytes.toString('base64').replace(/=+$/, '') !== wire.bodyBase64.replace(/=+$/, '')) {
    throw new LedgerError('validation', `${field}: not canonical base64`, { field });
  }
  return { status: wire.status, headers: wire.headers, body: new Uint8Array(bytes) };
}
