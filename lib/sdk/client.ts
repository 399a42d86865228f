// The SDK: `ledger.effect(spec, call)` claims the effect (skipping when someone else holds or
// settled it), calls with the provider idempotency key (R2), classifies the raw response, follows
// "already existed" pointers (R3) and reports done, failed, unknown or stuck together with the raw
// response (R1): two ledger calls per effect, claim and outcome. A thrown or timed-out call is
// unknown, never failed, unless the provider said no (ProviderRejected) or the provider client proves
// nothing was sent (error.providerSent === 'no').
import { classifyHttp } from './classify.ts';
import {
  CallTimeout,
  callWithTimeout,
  errorEvidence,
  outcomeRequest,
  ProviderRejected,
  type CallContext,
  type EffectOptions,
  type EffectResult,
  type EffectSpec,
  type Settled,
} from './effect.ts';
import type { Classification, Provider, RawResponse } from './provider.ts';
import { followReference } from './follow.ts';
import { resolveIdentity, type ToolDefinition } from './tools.ts';
import type { ClaimWon, CreateRunRequest, DeletionRequest, PlanItem, Transport } from './types.ts';

export { ProviderRejected, type CallContext, type EffectOptions, type EffectResult, type EffectSpec };

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
  /** One effect by its key: state, epoch, receipt and the stored raw response; `not_found` when absent. */
  readEffect(key: string) {
    return this.transport.readEffect(key);
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
    const claim = await this.transport.claim({
      runId: spec.run,
      tool: spec.tool,
      action: spec.action,
      recordId: spec.record,
      target: spec.target,
    });
    if (!claim.claimed) {
      const { key, epoch, state, changedBy, changedAt } = claim;
      return { status: 'skipped', key, epoch, state, changedBy, changedAt };
    }
    const settled = await this.settle(claim, call, options);
    const report = outcomeRequest(claim.attemptId, settled);
    try {
      await this.transport.reportOutcome(report);
    } catch (error) {
      // The ledger did not hear the outcome: the effect stays pending until its lease runs out. The
      // raw response alone may still get through (R1: it lands on the attempt, which the outcome's
      // lock or a busy effect row does not hold up), so the reconciler can complete the effect from
      // its receipt instead of marking it unknown. Whatever happens, the report (raw response
      // included) goes up with the error as LedgerApiError.unreported, for the caller to keep or resend.
      if (settled.response)
        await this.transport.recordResponse(claim.attemptId, settled.response).catch(() => undefined);
      if (error !== null && typeof error === 'object') Object.assign(error, { unreported: report });
      throw error;
    }
    return settled;
  }

  /** Calls, classifies and follows; never throws: whatever happens becomes an outcome to report. */
  private async settle(
    claim: ClaimWon,
    call: (ctx: CallContext) => Promise<RawResponse | Response>,
    options: EffectOptions,
  ): Promise<Settled> {
    const { key, epoch } = claim;
    let raw: RawResponse;
    try {
      raw = await callWithTimeout(call, claim, options.timeoutMs ?? 30_000);
    } catch (error) {
      if (error instanceof ProviderRejected)
        return { status: 'failed', key, epoch, evidence: { ...error.evidence, ...errorEvidence(error) } };
      // A provider client that can prove nothing left (connection refused) frees the key (S3).
      if ((error as { providerSent?: string } | null)?.providerSent === 'no')
        return { status: 'failed', key, epoch, evidence: { ...errorEvidence(error), providerSent: 'no' } };
      return {
        status: 'unknown',
        key,
        epoch,
        evidence: { ...errorEvidence(error), timedOut: error instanceof CallTimeout },
      };
    }

    // From here on the raw response goes into every report (R1), whatever the classifier does.
    let verdict: Classification;
    try {
      verdict = (options.classify ?? options.provider?.classify.bind(options.provider) ?? classifyHttp)(raw);
    } catch (error) {
      return {
        status: 'unknown',
        key,
        epoch,
        evidence: { ...errorEvidence(error), why: 'the response could not be classified' },
        response: raw,
      };
    }
    switch (verdict.outcome) {
      case 'done':
        return { status: 'done', key, epoch, receipt: verdict.receipt, response: raw };
      case 'failed':
      case 'unknown':
      case 'stuck':
        return { status: verdict.outcome, key, epoch, evidence: verdict.evidence, response: raw };
      case 'already_existed':
        return {
          ...(await followReference(verdict, options.provider, options.timeoutMs ?? 30_000)),
          key,
          epoch,
          response: raw,
        };
      default:
        return verdict satisfies never;
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

  /**
   * Runs a registered tool: identity comes from the tool definition's resolution step (the record it
   * looked up and one target), generated inputs never reach the key.
   * `via` is a Provider (the tool's generated inputs are its payload, the identity's target its target)
   * or a function that makes the call itself.
   */
  async tool<A extends object>(
    tool: ToolDefinition<A>,
    run: string,
    args: A,
    via: Provider | ((ctx: CallContext & { args: A }) => Promise<RawResponse | Response>),
    options?: EffectOptions,
  ): Promise<EffectResult> {
    const id = await resolveIdentity(tool, args, run);
    const spec = { run, tool: tool.name, action: tool.action, record: id.record, target: id.target };
    if (typeof via !== 'function') {
      const generated = tool.generated.filter((input) => input in args);
      const payload = Object.fromEntries(generated.map((input) => [input, args[input]]));
      return this.send(via, spec, payload, options);
    }
    return this.effect(spec, (ctx) => via({ ...ctx, args }), options);
  }
}

export function createLedger(transport: Transport): Ledger {
  return new Ledger(transport);
}
