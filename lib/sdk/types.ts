// Wire types of the agent API, derived from the same zod schemas the server parses with (type-only
// imports: the SDK pulls no server code into a runtime).
import type { z } from 'zod';
import type * as s from '../api/schemas.ts';

export type CreateRunRequest = z.input<typeof s.createRunBody>;
export type RunCreated = z.output<typeof s.createRunResponse>;
export type PlanItem = z.input<typeof s.submitPlanBody>['items'][number];
export type PlanSubmitted = z.output<typeof s.submitPlanResponse>;
export type RunView = z.output<typeof s.runViewResponse>;
export type ReplayTarget = z.output<typeof s.replayBlocked>['targets'][number];
export type ReplayResponse =
  ({ status: 202 } & z.output<typeof s.replayAccepted>) | ({ status: 409 } & z.output<typeof s.replayBlocked>);
export type ClaimRequest = z.input<typeof s.claimBody>;
export type ClaimResponse = z.output<typeof s.claimWon> | z.output<typeof s.claimLost>;
export type OutcomeRequest = z.input<typeof s.outcomeBody>;
export type EffectStateResponse = z.output<typeof s.effectStateResponse>;
export type DeletionRequest = z.input<typeof s.deletionBody>;
export type DeletionResponse = z.output<typeof s.deletionResponse>;
export type { RawResponse, Classification, Provider, LookupResult } from '../providers/types.ts';

/** One door into the ledger: over HTTP (httpTransport) or in-process (directTransport). */
export interface Transport {
  createRun(body: CreateRunRequest): Promise<RunCreated>;
  submitPlan(runId: string, items: PlanItem[]): Promise<PlanSubmitted>;
  readRun(runId: string): Promise<RunView>;
  replay(runId: string): Promise<ReplayResponse>;
  claim(body: ClaimRequest): Promise<ClaimResponse>;
  recordResponse(attemptId: string, raw: import('../providers/types.ts').RawResponse): Promise<void>;
  reportOutcome(body: OutcomeRequest): Promise<EffectStateResponse>;
  reportDeletion(body: DeletionRequest): Promise<DeletionResponse>;
}

/** An error answer of the API, the same from both transports. */
export class LedgerApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'LedgerApiError';
  }
}
