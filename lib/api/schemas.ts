// Request and response schemas of /api/v1. The routes parse with them, responses are parsed
// (stripped to the documented shape) before they leave, and the OpenAPI document is generated
// from them (lib/api/openapi.ts).
import { z } from 'zod';
import { PROBLEM_TYPES, type ProblemCode } from './problem.ts';
import { EffectState } from '../ledger/transitions.ts';
import { claimEffectInput } from '../ledger/commands/claim-effect.ts';
import { completeEffectInput } from '../ledger/commands/complete-effect.ts';
import { createRunInput } from '../ledger/commands/create-run.ts';
import { failEffectInput } from '../ledger/commands/fail-effect.ts';
import { markStuckInput } from '../ledger/commands/mark-stuck.ts';
import { markUnknownInput } from '../ledger/commands/mark-unknown.ts';
import { revokeByDeletionInput } from '../ledger/commands/revoke-by-deletion.ts';
import { MAX_PLAN_ITEMS, planItemInput } from '../ledger/commands/submit-plan.ts';

/** Every named schema of the API: the OpenAPI components are generated from this registry. */
export const apiRegistry = z.registry<{ id: string; description?: string }>();
function named<T extends z.ZodType>(schema: T, id: string, description?: string): T {
  apiRegistry.add(schema, description ? { id, description } : { id });
  return schema;
}

const stateEnum = z.enum(EffectState);
const datetime = z.iso.datetime({ offset: true });

export const problemSchema = named(
  z
    .object({
      type: z.string().meta({ description: 'A URI reference naming the problem type (its section in /api/v1/docs).' }),
      title: z.string(),
      status: z.number().int(),
      detail: z.string().meta({ description: 'What went wrong, in words a person can act on.' }),
      code: z.enum(Object.keys(PROBLEM_TYPES) as [ProblemCode, ...ProblemCode[]]),
      field: z.string().optional().meta({ description: 'The input field at fault (dot path), for validation errors.' }),
    })
    .catchall(z.unknown()),
  'Problem',
  'An RFC 9457 problem document (application/problem+json). Extra members carry the details of the refusal.',
);

// --- runs ---
export const createRunBody = named(createRunInput, 'CreateRunRequest');
export const createRunResponse = named(
  z.object({
    runId: z.uuid(),
    workflow: z.string(),
    triggerId: z.string(),
    status: z.string(),
    createdAt: datetime,
  }),
  'Run',
);

export const submitPlanBody = named(
  z.strictObject({ items: z.array(planItemInput).min(1).max(MAX_PLAN_ITEMS) }),
  'SubmitPlanRequest',
);
export const submitPlanResponse = named(
  z.object({
    planId: z.uuid(),
    runId: z.uuid(),
    status: z.literal('submitted'),
    itemCount: z.number().int(),
    itemsHash: z.string(),
  }),
  'SubmittedPlan',
);

const runTarget = named(
  z.object({
    key: z.string(),
    tool: z.string(),
    action: z.string(),
    recordId: z.string(),
    target: z.string(),
    targetType: z.string(),
    inPlan: z.boolean(),
    epoch: z.number().int().nullable(),
    state: stateEnum.nullable(),
    changedBy: z.string().nullable(),
    changedAt: datetime.nullable(),
    receipt: z.string().nullable(),
    leaseExpiresAt: datetime.nullable(),
    awaitingClaim: z.boolean(),
    leaseExpired: z.boolean(),
  }),
  'RunTarget',
);

export const runViewResponse = named(
  z.object({
    run: z.object({
      id: z.uuid(),
      workflow: z.string(),
      triggerId: z.string(),
      status: z.string(),
      toolHistoryComplete: z.boolean(),
      createdBy: z.string(),
      createdAt: datetime,
    }),
    plan: z
      .object({
        id: z.uuid(),
        status: z.string(),
        itemCount: z.number().int(),
        itemsHash: z.string(),
        approvedAt: datetime.nullable(),
        submittedAt: datetime,
      })
      .nullable(),
    counts: z.record(z.string(), z.number().int()),
    headline: z.object({ done: z.number().int(), approved: z.number().int(), ratio: z.number() }).nullable(),
    targets: z.array(runTarget),
    truncated: z.boolean(),
  }),
  'RunView',
);

export const replayBody = named(z.strictObject({}), 'ReplayRequest');
const replayTarget = named(
  z.object({
    target: z.string(),
    key: z.string(),
    epoch: z.number().int().nullable(),
    state: z.union([stateEnum, z.literal('not_started')]),
    changedBy: z.string().nullable(),
    changedAt: datetime.nullable(),
  }),
  'ReplayTarget',
);
export const replayAccepted = named(
  z.object({ runId: z.uuid(), proceed: z.array(replayTarget), skip: z.array(replayTarget) }),
  'ReplayAccepted',
);
export const replayBlocked = named(
  problemSchema.extend({ blocking: z.number().int(), targets: z.array(replayTarget) }),
  'ReplayBlocked',
);

// --- effects ---
export const claimBody = named(claimEffectInput, 'ClaimRequest');
export const claimWon = named(
  z.object({
    claimed: z.literal(true),
    key: z.string(),
    epoch: z.number().int(),
    attemptId: z.uuid(),
    idempotencyKey: z.string(),
  }),
  'ClaimWon',
  'This caller holds the key: call the provider with idempotencyKey, then report.',
);
export const claimLost = named(
  z.object({
    claimed: z.literal(false),
    key: z.string(),
    epoch: z.number().int(),
    state: stateEnum,
    changedBy: z.string(),
    changedAt: datetime,
  }),
  'ClaimLost',
  'Someone else holds or settled the key: skip, do not call the provider.',
);

export const attemptResponseBody = named(
  z.strictObject({
    status: z.number().int().min(0).max(999),
    headers: z.array(z.tuple([z.string().max(1024), z.string().max(16384)])).max(500),
    /** The body bytes exactly as received, base64. */
    bodyBase64: z
      .string()
      .max(14_000_000)
      .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64'),
  }),
  'RawResponse',
);

const reportedResponse = attemptResponseBody
  .optional()
  .meta({ description: "The attempt's raw provider response (R1), stored with the outcome in one transaction." });
// A runtime reports the outcome of its own claim, named by the claim's attempt: the ledger moves the
// key only while that attempt is the newest claim of its key and epoch (S3), so a late report from a
// process whose claim was freed and taken again can never settle the new holder's claim.
const reportedAttempt = z.uuid().meta({ description: 'The attemptId the claim returned (S3).' });
export const outcomeBody = named(
  z.discriminatedUnion('outcome', [
    completeEffectInput.extend({ outcome: z.literal('done'), attemptId: reportedAttempt, response: reportedResponse }),
    failEffectInput.extend({ outcome: z.literal('failed'), attemptId: reportedAttempt, response: reportedResponse }),
    markUnknownInput.extend({ outcome: z.literal('unknown'), attemptId: reportedAttempt, response: reportedResponse }),
    markStuckInput.extend({ outcome: z.literal('stuck'), attemptId: reportedAttempt, response: reportedResponse }),
  ]),
  'OutcomeRequest',
);
export const effectStateResponse = named(
  z.object({
    key: z.string(),
    epoch: z.number().int(),
    from: stateEnum,
    state: stateEnum,
    changedBy: z.string(),
    changedAt: datetime,
    receipt: z.string().nullable(),
  }),
  'EffectState',
);

export const effectViewResponse = named(
  z.object({
    key: z.string(),
    runId: z.uuid(),
    tool: z.string(),
    action: z.string(),
    recordId: z.string(),
    target: z.string(),
    targetType: z.string(),
    epoch: z.number().int(),
    state: stateEnum,
    changedBy: z.string(),
    changedAt: datetime,
    receipt: z.string().nullable(),
    leaseExpiresAt: datetime.nullable(),
    leaseExpired: z.boolean(),
    awaitingClaim: z.boolean(),
    response: attemptResponseBody
      .nullable()
      .meta({ description: "The latest attempt's raw provider response of this epoch (R1), or null." }),
  }),
  'Effect',
  'One effect at its current epoch: state, receipt and the stored raw response.',
);

export const deletionBody = named(revokeByDeletionInput, 'DeletionRequest');
export const deletionResponse = named(
  z.object({
    key: z.string(),
    epoch: z.number().int(),
    state: z.literal('revoked'),
    objectId: z.string(),
    deletedAt: datetime,
    successorId: z.uuid(),
    changedBy: z.string(),
    changedAt: datetime,
  }),
  'Deletion',
);

export const attemptRecorded = named(z.object({ attemptId: z.uuid(), bytes: z.number().int() }), 'AttemptRecorded');
