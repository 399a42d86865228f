// One effect's pieces: what the caller names (EffectSpec), what the call gets (CallContext), what
// comes out (EffectResult); the provider call under its timeout, and the outcome report a settled
// effect becomes, with the raw response in it (R1).
import { rawFromResponse, type Classification, type Provider, type RawResponse } from './provider.ts';
import { encodeRawResponse, type ClaimWon, type OutcomeRequest } from './types.ts';

export interface EffectSpec {
  /** The run id (from createRun). */
  run: string;
  /** Tool and action tag as registered. */
  tool: string;
  action: string;
  /** The business record the tool looked up (never typed by the model). */
  record: string;
  /** Exactly one target (normalized on the server). */
  target: string;
}

export interface CallContext {
  /** Pass this to the provider (R2): derived from (key, epoch). */
  idempotencyKey: string;
  key: string;
  epoch: number;
  attemptId: string;
  /** Aborted when the call times out. */
  signal: AbortSignal;
}

export interface EffectOptions {
  /** Classifies the raw response; default: provider.classify, else a generic HTTP classifier. */
  classify?: (raw: RawResponse) => Classification;
  /** For classify and for following "already existed" references (R3). */
  provider?: Pick<Provider, 'classify'> & Partial<Pick<Provider, 'followReference'>>;
  /** After this the call is abandoned and the effect is unknown. Default 30 s. */
  timeoutMs?: number;
}

export type EffectResult =
  | { status: 'skipped'; key: string; epoch: number; state: string; changedBy: string; changedAt: string }
  | { status: 'done'; key: string; epoch: number; receipt: string; response: RawResponse }
  | {
      status: 'failed' | 'unknown' | 'stuck';
      key: string;
      epoch: number;
      evidence: Record<string, unknown>;
      response?: RawResponse;
    };

export type Settled = Exclude<EffectResult, { status: 'skipped' }>;

/** Throw this from a call when the provider definitively said no without an HTTP response to store. */
export class ProviderRejected extends Error {
  constructor(
    message: string,
    readonly evidence: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ProviderRejected';
  }
}

export class CallTimeout extends Error {
  constructor(ms: number) {
    super(`the provider call did not answer within ${ms} ms`);
    this.name = 'CallTimeout';
  }
}

export const errorEvidence = (error: unknown) => ({
  error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
});

/** Runs the call with the timeout; a Response is read into a RawResponse before anything else. */
export async function callWithTimeout(
  call: (ctx: CallContext) => Promise<RawResponse | Response>,
  claim: ClaimWon,
  timeoutMs: number,
): Promise<RawResponse> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new CallTimeout(timeoutMs);
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    const { key, epoch, attemptId, idempotencyKey } = claim;
    const result = await Promise.race([
      call({ idempotencyKey, key, epoch, attemptId, signal: controller.signal }),
      timeout,
    ]);
    return result instanceof Response ? await rawFromResponse(result) : result;
  } finally {
    clearTimeout(timer);
  }
}

/** The outcome report for a settled effect, carrying the raw response when there is one (R1). */
export function outcomeRequest(attemptId: string, r: Settled): OutcomeRequest {
  const base = {
    key: r.key,
    epoch: r.epoch,
    attemptId,
    ...(r.response ? { response: encodeRawResponse(r.response) } : {}),
  };
  switch (r.status) {
    case 'done':
      return { ...base, outcome: 'done', receipt: r.receipt };
    case 'unknown':
      return { ...base, outcome: 'unknown', evidence: r.evidence };
    case 'failed':
      return { ...base, outcome: 'failed', evidence: r.evidence };
    case 'stuck':
      return { ...base, outcome: 'stuck', evidence: r.evidence };
    default:
      return r satisfies never;
  }
}
