// What a runtime may do, in one place for both doors: the HTTP route handlers and the SDK's direct
// (in-process) transport call these. Each authorizes the runtime for the workflow of the run or
// effect it names (Z6; refusals audited, A4), then delegates to the ledger commands.
import { auditRefusal } from '../audit/append.ts';
import type { Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../ledger/actor.ts';
import { getRun, type RunInfo } from '../ledger/catalog.ts';
import {
  checkReplay,
  claimEffect,
  completeEffect,
  createRun,
  failEffect,
  markStuck,
  markUnknown,
  readRun,
  recordResponse,
  revokeByDeletion,
  submitPlan,
} from '../ledger/index.ts';
import { forbidden, LedgerError, notFound } from '../ledger/errors.ts';
import { parseInput } from '../ledger/validate.ts';
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
}

/** An operation's answer: the HTTP status and the JSON body (the direct transport sees the same). */
export interface OpResult<T = unknown> {
  status: number;
  body: T;
}

function inScope(actor: Actor, workflow: string): boolean {
  if (actor.kind !== 'runtime') return true;
  return actor.workflows.includes('*') || actor.workflows.includes(workflow);
}

async function refuseScope(
  ctx: OpContext,
  action: string,
  chain: string,
  subjectType: string,
  subjectId: string,
  workflow: string,
  runId: string | null,
): Promise<never> {
  const why = `runtime key "${ctx.actor.label}" is not scoped to workflow "${workflow}"`;
  await auditRefusal(ctx.db, {
    chain,
    actor: ctx.actor,
    action,
    subjectType,
    subjectId,
    runId,
    why,
    request: ctx.request,
  });
  throw forbidden(why, { workflow });
}

export async function authorizeRun(ctx: OpContext, runId: string, action: string): Promise<RunInfo> {
  parseInput(runParams, { runId });
  const run = await getRun(ctx.db, runId);
  if (!inScope(ctx.actor, run.workflow))
    await refuseScope(ctx, action, `run:${run.id}`, 'run', run.id, run.workflow, run.id);
  return run;
}

export async function authorizeEffect(ctx: OpContext, key: string, action: string): Promise<void> {
  const rows = await ctx.db.$queryRaw<{ workflow: string; run_id: string }[]>`
    SELECT ev.workflow, k.run_id FROM effect_key k JOIN event ev ON ev.trigger_id = k.trigger_id WHERE k.key = ${key}`;
  const row = rows[0];
  if (!row) throw notFound(`no effect ${key}`, { field: 'key' });
  if (!inScope(ctx.actor, row.workflow))
    await refuseScope(ctx, action, `effect:${key}`, 'effect', key, row.workflow, row.run_id);
}

export async function opCreateRun(ctx: OpContext, body: z.input<typeof createRunBody>): Promise<OpResult> {
  const input = parseInput(createRunBody, body);
  if (!inScope(ctx.actor, input.workflow))
    await refuseScope(
      ctx,
      'run.create',
      `workflow:${input.workflow}`,
      'workflow',
      input.workflow,
      input.workflow,
      null,
    );
  return { status: 201, body: await createRun(ctx, input) };
}

export async function opSubmitPlan(
  ctx: OpContext,
  runId: string,
  body: z.input<typeof submitPlanBody>,
): Promise<OpResult> {
  const input = parseInput(submitPlanBody, body);
  await authorizeRun(ctx, runId, 'plan.submit');
  return { status: 201, body: await submitPlan(ctx, { runId, items: input.items }) };
}

export async function opReadRun(ctx: OpContext, runId: string): Promise<OpResult> {
  await authorizeRun(ctx, runId, 'run.read');
  return { status: 200, body: await readRun(ctx, { runId }) };
}

export async function opReplay(ctx: OpContext, runId: string, body: unknown = {}): Promise<OpResult> {
  parseInput(replayBody, body ?? {});
  await authorizeRun(ctx, runId, 'run.replay_request');
  const check = await checkReplay(ctx, { runId });
  if (check.blocked) {
    return {
      status: 409,
      body: {
        error: { code: 'conflict', message: check.reason, details: { blocking: check.blocking } },
        targets: check.targets,
      },
    };
  }
  return { status: 202, body: { runId: check.runId, proceed: check.proceed, skip: check.skip } };
}

export async function opClaim(ctx: OpContext, body: z.input<typeof claimBody>): Promise<OpResult> {
  const input = parseInput(claimBody, body);
  await authorizeRun(ctx, input.runId, 'effect.claim');
  const result = await claimEffect(ctx, input);
  if (result.claimed) {
    const { key, epoch, attemptId, idempotencyKey } = result;
    return { status: 201, body: { claimed: true, key, epoch, attemptId, idempotencyKey } };
  }
  const { key, epoch, state, changedBy, changedAt } = result;
  return { status: 200, body: { claimed: false, key, epoch, state, changedBy, changedAt } };
}

export async function opOutcome(ctx: OpContext, body: z.input<typeof outcomeBody>): Promise<OpResult> {
  const input = parseInput(outcomeBody, body);
  await authorizeEffect(ctx, input.key, `effect.${input.outcome}`);
  const { outcome, ...rest } = input;
  let result;
  switch (outcome) {
    case 'done':
      result = await completeEffect(ctx, rest);
      break;
    case 'failed':
      result = await failEffect(ctx, rest);
      break;
    case 'unknown':
      result = await markUnknown(ctx, rest);
      break;
    case 'stuck':
      result = await markStuck(ctx, rest);
      break;
    default:
      return outcome satisfies never;
  }
  const { key, epoch, from, state, changedBy, changedAt, receipt } = result;
  return { status: 200, body: { key, epoch, from, state, changedBy, changedAt, receipt } };
}

export async function opDeletion(ctx: OpContext, body: z.input<typeof deletionBody>): Promise<OpResult> {
  const input = parseInput(deletionBody, body);
  await authorizeEffect(ctx, input.key, 'effect.revoke_deletion');
  return { status: 200, body: await revokeByDeletion(ctx, input) };
}

export async function opAttemptResponse(
  ctx: OpContext,
  attemptId: string,
  body: z.input<typeof attemptResponseBody>,
): Promise<OpResult> {
  const input = parseInput(attemptResponseBody, body);
  parseInput(attemptParams, { attemptId });
  const attempt = await ctx.db.attempt.findUnique({ where: { id: attemptId }, select: { runId: true } });
  if (!attempt) throw notFound(`attempt ${attemptId} does not exist`, { field: 'attemptId' });
  await authorizeRun(ctx, attempt.runId, 'attempt.record_response');
  const bytes = Buffer.from(input.bodyBase64, 'base64');
  if (bytes.toString('base64').replace(/=+$/, '') !== input.bodyBase64.replace(/=+$/, '')) {
    throw new LedgerError('validation', 'bodyBase64: not canonical base64', { field: 'bodyBase64' });
  }
  return {
    status: 201,
    body: await recordResponse(ctx, {
      attemptId,
      status: input.status,
      headers: input.headers,
      body: new Uint8Array(bytes),
    }),
  };
}
