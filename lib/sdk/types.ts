// Wire types of the agent API (/api/v1), written by hand so the SDK carries no schema library.
// tests/unit/sdk-wire-types.test.ts checks at compile time that each one equals the input or output
// of the zod schema the server parses with (lib/api/schemas.ts): a change on either side that the
// other does not follow fails `npm run typecheck`.
import type { RawResponse } from './provider.ts';
import type { EncodedRawResponse } from './raw-wire.ts';

/** The `code` of a problem document; stable, for programs (the server's list is lib/api/problem.ts). */
export type ProblemCode =
  | 'validation'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'invalid_transition'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'unavailable'
  | 'internal';

/** The states of a key at one epoch (S1-S7). */
export type EffectState = 'pending' | 'done' | 'failed' | 'unknown' | 'revoked' | 'stuck';

/** An RFC 9457 problem document: every 4xx and 5xx body of the API. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  field?: string;
  [member: string]: unknown;
}

// --- runs ---
export interface CreateRunRequest {
  workflow: string;
  /** Event id or scheduled occurrence id of the trigger: never the wall clock (K1). */
  triggerId: string;
}
export interface RunCreated {
  runId: string;
  workflow: string;
  triggerId: string;
  status: string;
  createdAt: string;
}

export interface PlanItem {
  tool: string;
  action: string;
  recordId: string;
  target: string;
}
export interface SubmitPlanRequest {
  items: PlanItem[];
}
export interface PlanSubmitted {
  planId: string;
  runId: string;
  status: 'submitted';
  itemCount: number;
  itemsHash: string;
}

export interface RunTarget {
  key: string;
  tool: string;
  action: string;
  recordId: string;
  target: string;
  targetType: string;
  inPlan: boolean;
  epoch: number | null;
  state: EffectState | null;
  changedBy: string | null;
  changedAt: string | null;
  receipt: string | null;
  leaseExpiresAt: string | null;
  awaitingClaim: boolean;
  leaseExpired: boolean;
}
export interface RunView {
  run: {
    id: string;
    workflow: string;
    triggerId: string;
    status: string;
    toolHistoryComplete: boolean;
    createdBy: string;
    createdAt: string;
  };
  plan: {
    id: string;
    status: string;
    itemCount: number;
    itemsHash: string;
    approvedAt: string | null;
    submittedAt: string;
  } | null;
  counts: Record<string, number>;
  headline: { done: number; approved: number; ratio: number } | null;
  targets: RunTarget[];
  truncated: boolean;
}

export interface ReplayTarget {
  target: string;
  key: string;
  epoch: number | null;
  /** `not_started`: planned, never claimed. */
  state: EffectState | 'not_started';
  changedBy: string | null;
  changedAt: string | null;
}
export interface ReplayAccepted {
  runId: string;
  proceed: ReplayTarget[];
  skip: ReplayTarget[];
}
export interface ReplayBlocked extends Problem {
  blocking: number;
  targets: ReplayTarget[];
}
/** F6: 202 with what may proceed, or 409 with every target's state. */
export type ReplayResponse = ({ status: 202 } & ReplayAccepted) | ({ status: 409 } & ReplayBlocked);

// --- effects ---
export interface ClaimRequest {
  runId: string;
  tool: string;
  action: string;
  recordId: string;
  target: string;
}
export interface ClaimWon {
  claimed: true;
  key: string;
  epoch: number;
  attemptId: string;
  /** Pass this to the provider (R2). */
  idempotencyKey: string;
}
export interface ClaimLost {
  claimed: false;
  key: string;
  epoch: number;
  state: EffectState;
  changedBy: string;
  changedAt: string;
}
export type ClaimResponse = ClaimWon | ClaimLost;

/** A provider's raw response on the wire (R1): the body bytes exactly as received, base64. */
export interface AttemptRecorded {
  attemptId: string;
  bytes: number;
}

interface OutcomeBase {
  key: string;
  /** The epoch acted on; omitted: the key's current epoch. */
  epoch?: number;
  /** The claim's attemptId: the report moves the key only while that claim is its newest (S3). */
  attemptId: string;
  /** The attempt's raw response (R1), stored with the outcome in one transaction. */
  response?: EncodedRawResponse;
}
/** done needs a receipt someone can look up later (S2). */
export interface DoneOutcome extends OutcomeBase {
  outcome: 'done';
  receipt: string;
  evidence?: Record<string, unknown>;
}
/** A definitive refusal, with the provider's answer as evidence; frees the key (S3). */
export interface FailedOutcome extends OutcomeBase {
  outcome: 'failed';
  evidence: Record<string, unknown>;
}
/** Nobody can tell whether it happened (S4). */
export interface UnknownOutcome extends OutcomeBase {
  outcome: 'unknown';
  evidence?: Record<string, unknown>;
}
/** Issued but can never complete (S6). */
export interface StuckOutcome extends OutcomeBase {
  outcome: 'stuck';
  evidence: Record<string, unknown>;
}
export type OutcomeRequest = DoneOutcome | FailedOutcome | UnknownOutcome | StuckOutcome;
export interface EffectStateResponse {
  key: string;
  epoch: number;
  from: EffectState;
  state: EffectState;
  changedBy: string;
  changedAt: string;
  receipt: string | null;
}

/** One effect at its current epoch (GET /effects/{key}): what a repeated call can answer with. */
export interface EffectView {
  key: string;
  runId: string;
  tool: string;
  action: string;
  recordId: string;
  target: string;
  targetType: string;
  epoch: number;
  state: EffectState;
  changedBy: string;
  changedAt: string;
  receipt: string | null;
  leaseExpiresAt: string | null;
  leaseExpired: boolean;
  awaitingClaim: boolean;
  /** The latest attempt's raw provider response of this epoch (R1), or null. */
  response: EncodedRawResponse | null;
}

export interface DeletionRequest {
  key: string;
  /** The epoch that produced the deleted object (the claim's). */
  epoch: number;
  /** The id of the object the effect produced and that was deleted. */
  objectId: string;
  /** When it was deleted (ISO 8601 with offset); omitted: now. Part of the successor id. */
  deletedAt?: string;
  reason?: string;
}
export interface DeletionResponse {
  key: string;
  epoch: number;
  state: 'revoked';
  objectId: string;
  deletedAt: string;
  /** The deterministic id a redo must use (V2). */
  successorId: string;
  changedBy: string;
  changedAt: string;
}

/** One door into the ledger: over HTTP (httpTransport), or in process on the server. */
export interface Transport {
  createRun(body: CreateRunRequest): Promise<RunCreated>;
  submitPlan(runId: string, items: PlanItem[]): Promise<PlanSubmitted>;
  readRun(runId: string): Promise<RunView>;
  replay(runId: string): Promise<ReplayResponse>;
  claim(body: ClaimRequest): Promise<ClaimResponse>;
  /** Stores an attempt's raw response on its own; `reportOutcome` with `response` does it in the same call. */
  recordResponse(attemptId: string, raw: RawResponse): Promise<AttemptRecorded>;
  reportOutcome(body: OutcomeRequest): Promise<EffectStateResponse>;
  reportDeletion(body: DeletionRequest): Promise<DeletionResponse>;
  /** One effect by its key; a LedgerApiError `not_found` when no effect has it. */
  readEffect(key: string): Promise<EffectView>;
}

export { encodeRawResponse, RAW_CUT_HEADER, RAW_LIMITS, type EncodedRawResponse } from './raw-wire.ts';
