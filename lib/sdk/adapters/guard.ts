// The one ledger path every framework boundary (AI SDK, OpenAI Agents, LangChain, MCP) goes through:
// a tool call is claimed with a key from the tool definition's resolution step (the record the tool
// looked up for the arguments and its one target, never generated text or the model's spelling), the team's own tool runs only for the claim's winner, and its
// return value is stored as the attempt's raw response (R1) so a repeated intent gets that stored
// result back without running the tool again. An effect nobody can vouch for (unknown, stuck, still
// held by another caller, revoked) becomes a hold: the host must stop, never tell the model it worked.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CallContext, EffectOptions, Ledger } from '../client.ts';
import type { Classification, Provider, RawResponse } from '../provider.ts';
import { resolveIdentity, type ToolDefinition } from '../tools.ts';
import type { EffectState } from '../types.ts';

/** The content type of a raw response that is a tool's own return value (JSON), not a provider's answer. */
export const TOOL_RESULT_TYPE = 'application/vnd.effect-ledger.tool-result+json';

export interface GuardOptions<A extends object> {
  ledger: Ledger;
  /** The registered tool: name, action, and which arguments are identity and which are generated. */
  definition: ToolDefinition<A>;
  /** The run id (from ledger.createRun), or a function returning the current one. */
  run: string | (() => string);
  /** Declared read-only: no claim, the tool runs untouched on every call. */
  readOnly?: boolean;
  /** The receipt in the tool's return value; default: its `receipt`, `id` or `messageId` string. */
  receipt?: (result: unknown) => string | null | undefined;
  /** What the tool's return value means, when a receipt alone does not say it (a provider's own
   *  statuses); default: classifyToolResult with `receipt`. An `already_existed` answer is followed
   *  through `provider` (R3). */
  classify?: (result: unknown) => Classification;
  /** The provider the tool sends through, for following an "already existed" reference (R3). */
  provider?: Partial<Pick<Provider, 'followReference'>>;
  /** Called with every hold, for the host (alerting, stopping the run). */
  onHold?: (hold: EffectHold) => void;
  /** Passed to ledger.effect: the tool is abandoned (and the effect unknown) after this. Default 30 s. */
  timeoutMs?: EffectOptions['timeoutMs'];
}

/** Why a call did not run and did not return a result: a person must look before anything is retried. */
export interface EffectHold {
  status: 'held';
  key: string;
  epoch: number;
  state: EffectState;
  tool: string;
  reason: string;
  changedBy?: string;
  changedAt?: string;
}

/** Thrown (or turned into the framework's error result) when a call is held. */
export class EffectHeldError extends Error {
  constructor(readonly hold: EffectHold) {
    // Structured, so a model or a host reading only the message still sees the state and the key.
    super(`effect_held ${JSON.stringify(hold)}`);
    this.name = 'EffectHeldError';
  }
}

export type Guarded<R> =
  | { kind: 'ran'; value: R; key: string | null; receipt: string | null }
  | { kind: 'stored'; value: unknown; key: string; receipt: string | null }
  | { kind: 'held'; hold: EffectHold };

const effectContext = new AsyncLocalStorage<CallContext>();

/** Inside a ledgered tool call: the claim's context; pass `idempotencyKey` to the provider (R2).
 *  Never null by type: called anywhere else (outside a call, in a read-only tool) it throws, because
 *  a provider call made there has no claim and no idempotency key to carry. */
export function currentEffect(): CallContext {
  const effect = effectContext.getStore();
  if (!effect)
    throw new Error(
      'currentEffect() is called outside a ledgered tool call: only a tool wrapped by the ledger (and not read-only) has an effect',
    );
  return effect;
}

/** The claim's context inside a ledgered call, or null: for code that also runs unguarded. */
export function currentEffectOrNull(): CallContext | null {
  return effectContext.getStore() ?? null;
}

export function defaultReceipt(result: unknown): string | null {
  if (result === null || typeof result !== 'object') return null;
  const r = result as Record<string, unknown>;
  for (const name of ['receipt', 'id', 'messageId'])
    if (typeof r[name] === 'string' && r[name] !== '') return r[name] as string;
  return null;
}

/** Values a provider uses for an object it accepted but that waits for something more. */
const NOT_FINAL = new Set(['awaiting_completion', 'requires_action', 'requires_confirmation', 'draft']);

/**
 * The default meaning of a tool's return value. A receipt makes it done (S2), except where the value
 * itself says the provider did not finish: it points at an object that already existed (R3: what
 * that object became decides, so it is unknown unless a `provider` follows it), it waits for a
 * completion call (a one-shot completion token, S6) or its status is not final. No receipt: unknown.
 */
export function classifyToolResult(
  result: unknown,
  receiptOf: (result: unknown) => string | null | undefined = defaultReceipt,
): Classification {
  const r = result !== null && typeof result === 'object' ? (result as Record<string, unknown>) : {};
  const receipt = receiptOf(result);
  if (r.already_existed === true || r.alreadyExisted === true) {
    const reference = typeof receipt === 'string' && receipt ? receipt : null;
    return reference
      ? { outcome: 'already_existed', reference, evidence: { result } }
      : { outcome: 'unknown', evidence: { result, why: 'already existed, with no reference to follow (R3)' } };
  }
  if (r.completionToken !== undefined || r.completion_token !== undefined)
    return { outcome: 'unknown', evidence: { why: 'the provider waits for a completion call (S6)', result } };
  if (typeof r.status === 'string' && NOT_FINAL.has(r.status))
    return { outcome: 'unknown', evidence: { why: `the provider's status is ${r.status}, not final`, result } };
  return receipt
    ? { outcome: 'done', receipt }
    : { outcome: 'unknown', evidence: { why: 'the tool returned no receipt (receipt, id or messageId)' } };
}

const HOLD_REASONS: Partial<Record<EffectState, string>> = {
  pending: 'another call holds this effect and has not reported yet (or died doing it); wait for the ledger',
  unknown: 'nobody can tell whether this effect happened; support must resolve it before anything is retried',
  stuck: 'this effect was issued but can never complete; an operator must decide',
  revoked: 'this effect was revoked; only an operator can start a new epoch',
};

export function holdOf(
  tool: string,
  e: { key: string; epoch: number; state: EffectState; changedBy?: string; changedAt?: string },
): EffectHold {
  const reason = HOLD_REASONS[e.state] ?? `the effect is ${e.state}`;
  return { status: 'held', tool, reason, ...e };
}

const toolResultRaw = (value: unknown): RawResponse => ({
  status: 200,
  headers: [['content-type', TOOL_RESULT_TYPE]],
  body: new TextEncoder().encode(JSON.stringify(value ?? null)),
});

/** The stored result of a done effect: the tool's own return value when a boundary stored it, else the receipt. */
async function storedResult(ledger: Ledger, key: string): Promise<{ value: unknown; receipt: string | null }> {
  const view = await ledger.readEffect(key);
  const response = view.response;
  const isToolResult = response?.headers.some(([n, v]) => n === 'content-type' && v === TOOL_RESULT_TYPE);
  if (response && isToolResult) {
    const text = Buffer.from(response.bodyBase64, 'base64').toString('utf8');
    return { value: JSON.parse(text) as unknown, receipt: view.receipt };
  }
  return { value: { status: 'already_done', key, receipt: view.receipt }, receipt: view.receipt };
}

/** Claims, runs the tool for the winner only, reports; a repeat gets the stored result, doubt gets a hold. */
export async function guardCall<A extends object, R>(
  options: GuardOptions<A>,
  args: A,
  execute: () => Promise<R> | R,
): Promise<Guarded<R>> {
  if (options.readOnly) return { kind: 'ran', value: await execute(), key: null, receipt: null };
  const { ledger, definition } = options;
  const run = typeof options.run === 'function' ? options.run() : options.run;
  const id = await resolveIdentity(definition, args, run);
  const spec = { run, tool: definition.name, action: definition.action, record: id.record, target: id.target };
  const receiptOf = options.receipt ?? defaultReceipt;
  const classify = options.classify ?? ((value: unknown) => classifyToolResult(value, receiptOf));
  let ran: { value: R } | null = null;
  let thrown: { error: unknown } | null = null;
  const result = await ledger.effect(
    spec,
    async (ctx) => {
      try {
        ran = { value: await effectContext.run(ctx, async () => execute()) };
      } catch (error) {
        thrown = { error };
        throw error;
      }
      return toolResultRaw(ran.value);
    },
    {
      timeoutMs: options.timeoutMs,
      classify: () => classify(ran ? (ran as { value: R }).value : null),
      provider: options.provider as Provider | undefined,
    },
  );
  const held = (state: EffectState, extra: { changedBy?: string; changedAt?: string } = {}) => {
    const hold = holdOf(definition.name, { key: result.key, epoch: result.epoch, state, ...extra });
    options.onHold?.(hold);
    return { kind: 'held' as const, hold };
  };
  switch (result.status) {
    case 'done':
      return { kind: 'ran', value: (ran as { value: R } | null)!.value, key: result.key, receipt: result.receipt };
    case 'failed':
      // A definitive refusal frees the key (S3): the tool's own error goes back as it was thrown.
      throw (
        (thrown as { error: unknown } | null)?.error ??
        new Error(`the effect failed: ${JSON.stringify(result.evidence)}`)
      );
    case 'unknown':
    case 'stuck':
      return held(result.status);
    case 'skipped': {
      if (result.state !== 'done')
        return held(result.state as EffectState, { changedBy: result.changedBy, changedAt: result.changedAt });
      const stored = await storedResult(ledger, result.key);
      return { kind: 'stored', key: result.key, ...stored };
    }
    default:
      return result satisfies never;
  }
}
