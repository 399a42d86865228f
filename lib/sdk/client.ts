// The SDK: `ledger.effect(spec, call)` claims the effect (skipping when someone else holds or
// settled it), calls with the provider idempotency key (R2), stores the raw response before anything
// parses it (R1), classifies it, follows "already existed" pointers (R3) and reports done, failed,
// unknown or stuck. A thrown or timed-out call is unknown, never failed, unless the provider said no
// (ProviderRejected) or the provider client proves nothing was sent (error.providerSent === 'no').
import type { Classification, Provider, RawResponse } from '../providers/types.ts';
import type { ToolDefinition } from './tools.ts';
import type { ClaimResponse, CreateRunRequest, DeletionRequest, PlanItem, Transport } from './types.ts';

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

class CallTimeout extends Error {
  constructor(ms: number) {
    super(`the provider call did not answer within ${ms} ms`);
    this.name = 'CallTimeout';
  }
}

/** A generic HTTP classifier: 2xx with an id is done, a definitive 4xx is failed, the rest unknown. */
export function classifyHttp(raw: RawResponse): Classification {
  let body: Record<string, unknown> | null;
  try {
    body = JSON.parse(new TextDecoder().decode(raw.body)) as Record<string, unknown>;
  } catch {
    body = null;
  }
  const evidence = { status: raw.status, body: body ?? new TextDecoder().decode(raw.body).slice(0, 2000) };
  if (raw.status >= 200 && raw.status < 300) {
    const id = body?.id ?? body?.messageId ?? body?.transactionId;
    return typeof id === 'string' && id
      ? { outcome: 'done', receipt: id }
      : { outcome: 'unknown', evidence: { ...evidence, why: 'success without a receipt (S2)' } };
  }
  if (raw.status >= 400 && raw.status < 500 && raw.status !== 408 && raw.status !== 429)
    return { outcome: 'failed', evidence };
  return { outcome: 'unknown', evidence };
}

async function toRaw(result: RawResponse | Response): Promise<RawResponse> {
  if (typeof Response !== 'undefined' && result instanceof Response) {
    const headers: [string, string][] = [];
    result.headers.forEach((value, name) => headers.push([name, value]));
    return { status: result.status, headers, body: new Uint8Array(await result.arrayBuffer()) };
  }
  return result as RawResponse;
}

const errorEvidence = (error: unknown) => ({
  error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
});

export class Ledger {
  constructor(readonly transport: Transport) {}

  createRun(input: CreateRunRequest) {
    return this.transport.createRun(input);
  }
  submitPlan(runId: string, items: PlanItem[]) {
    return this.transport.submitPlan(runId, items);
  }
  readRun(runId: string) {
    return this.transport.readRun(runId);
  }
  /** F6: 202 with what may proceed, or 409 with every target's state. */
  replay(runId: string) {
    return this.transport.replay(runId);
  }
  /** V1, V2: report a deletion of what an effect produced; returns the successor id for a redo. */
  reportDeletion(input: DeletionRequest) {
    return this.transport.reportDeletion(input);
  }

  async effect(
    spec: EffectSpec,
    call: (ctx: CallContext) => Promise<RawResponse | Response>,
    options: EffectOptions = {},
  ): Promise<EffectResult> {
    const claim: ClaimResponse = await this.transport.claim({
      runId: spec.run,
      tool: spec.tool,
      action: spec.action,
      recordId: spec.record,
      target: spec.target,
    });
    if (!claim.claimed) {
      return {
        status: 'skipped',
        key: claim.key,
        epoch: claim.epoch,
        state: claim.state,
        changedBy: claim.changedBy,
        changedAt: claim.changedAt,
      };
    }
    const { key, epoch, attemptId } = claim;
    const report = async (
      r: EffectResult & { status: 'done' | 'failed' | 'unknown' | 'stuck' },
    ): Promise<EffectResult> => {
      if (r.status === 'done')
        await this.transport.reportOutcome({ key, epoch, outcome: 'done', receipt: r.receipt, attemptId });
      else if (r.status === 'unknown')
        await this.transport.reportOutcome({ key, epoch, outcome: 'unknown', evidence: r.evidence, attemptId });
      else await this.transport.reportOutcome({ key, epoch, outcome: r.status, evidence: r.evidence, attemptId });
      return r;
    };

    const timeoutMs = options.timeoutMs ?? 30_000;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let raw: RawResponse;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const error = new CallTimeout(timeoutMs);
          controller.abort(error);
          reject(error);
        }, timeoutMs);
      });
      raw = await toRaw(
        await Promise.race([
          call({ idempotencyKey: claim.idempotencyKey, key, epoch, attemptId, signal: controller.signal }),
          timeout,
        ]),
      );
    } catch (error) {
      if (error instanceof ProviderRejected)
        return report({ status: 'failed', key, epoch, evidence: { ...error.evidence, ...errorEvidence(error) } });
      // A provider client that can prove nothing left (connection refused) frees the key (S3).
      if ((error as { providerSent?: string } | null)?.providerSent === 'no') {
        return report({ status: 'failed', key, epoch, evidence: { ...errorEvidence(error), providerSent: 'no' } });
      }
      return report({
        status: 'unknown',
        key,
        epoch,
        evidence: { ...errorEvidence(error), timedOut: error instanceof CallTimeout },
      });
    } finally {
      clearTimeout(timer);
    }

    // R1: the raw response is stored before anything parses it. If this fails the process cannot
    // tell the ledger anything more: the effect stays pending until its lease, then unknown.
    await this.transport.recordResponse(attemptId, raw);

    let verdict: Classification;
    try {
      verdict = (options.classify ?? options.provider?.classify.bind(options.provider) ?? classifyHttp)(raw);
    } catch (error) {
      return report({
        status: 'unknown',
        key,
        epoch,
        evidence: { ...errorEvidence(error), why: 'the response could not be classified' },
        response: raw,
      });
    }
    switch (verdict.outcome) {
      case 'done':
        return report({ status: 'done', key, epoch, receipt: verdict.receipt, response: raw });
      case 'failed':
      case 'unknown':
      case 'stuck':
        return report({ status: verdict.outcome, key, epoch, evidence: verdict.evidence, response: raw });
      case 'already_existed':
        return report({ ...(await this.follow(verdict, options)), key, epoch, response: raw });
      default:
        return verdict satisfies never;
    }
  }

  /** R3: an "already existed" reply is a pointer; the prior object's state decides. Absence is never revocation. */
  private async follow(
    verdict: Extract<Classification, { outcome: 'already_existed' }>,
    options: EffectOptions,
  ): Promise<{ status: 'done'; receipt: string } | { status: 'stuck' | 'unknown'; evidence: Record<string, unknown> }> {
    const evidence = { ...verdict.evidence, alreadyExisted: verdict.reference };
    const follow = options.provider?.followReference?.bind(options.provider);
    if (!follow)
      return {
        status: 'unknown',
        evidence: { ...evidence, why: 'already existed, and the provider cannot look the prior object up' },
      };
    try {
      const prior = await follow(verdict.reference);
      if (!prior.found)
        return {
          status: 'unknown',
          evidence: { ...evidence, why: 'the prior object the provider pointed at could not be found' },
        };
      if (prior.state === 'failed')
        return {
          status: 'stuck',
          evidence: {
            ...evidence,
            priorState: 'failed',
            why: 'the provider dedupes onto a prior object that failed permanently (S6)',
          },
        };
      return { status: 'done', receipt: prior.receipt };
    } catch (error) {
      return {
        status: 'unknown',
        evidence: { ...evidence, ...errorEvidence(error), why: 'following the prior object failed' },
      };
    }
  }

  /** Sends through a Provider: the payload (generated content) goes to the provider, never into the key. */
  send(
    provider: Provider,
    spec: EffectSpec,
    payload: Record<string, unknown>,
    options: Omit<EffectOptions, 'provider'> = {},
  ): Promise<EffectResult> {
    return this.effect(
      spec,
      ({ idempotencyKey, key, epoch, signal }) =>
        provider.send({ key, epoch, idempotencyKey, target: spec.target, payload }, signal),
      { ...options, provider },
    );
  }

  /** Runs a registered tool: identity comes from the tool definition, generated inputs never reach the key. */
  tool<A extends object>(
    tool: ToolDefinition<A>,
    run: string,
    args: A,
    call: (ctx: CallContext & { args: A }) => Promise<RawResponse | Response>,
    options?: EffectOptions,
  ) {
    const id = tool.identity(args);
    return this.effect(
      { run, tool: tool.name, action: tool.action, record: id.record, target: id.target },
      (ctx) => call({ ...ctx, args }),
      options,
    );
  }
}

export function createLedger(transport: Transport): Ledger {
  return new Ledger(transport);
}
