// One item of a chunk, in the order the executor's steps go (executor.ts): the outcome of an item
// that needs no send (F4), then the provider's rate limit, the ledger's claim (F3), the send with the
// (key, epoch) idempotency key (R2), and the provider's answer settled (settle-verdict.ts).
import { claimReplayTarget, getTool } from '../ledger/index.ts';
import type { RegisteredProvider } from '../providers/registry.ts';
import { isCallFailure } from '../providers/types.ts';
import { observeProviderCall } from '../ops/work-metrics.ts';
import { traced } from '../ops/tracing.ts';
import type { RawResponse } from '../providers/types.ts';
import { RetryChunk, type ItemContext } from './executor.ts';
import type { ItemRow } from './item-window.ts';
import { outcomeWithoutSend } from './outcome-without-send.ts';
import { learnInterruptedFate } from './interrupted-fate.ts';
import { settle, settleVerdict, type SentItem } from './settle-verdict.ts';
import { span } from './step-trace.ts';

const defaultPayload = (i: { action: string; recordId: string }) => {
  const text = `This message was sent again by an operator's replay (${i.action}, record ${i.recordId}).`;
  return { subject: `${i.action.replace(/_/g, ' ')}`, text, body: text };
};

/** 'stopped': the replay is no longer running; nothing was claimed and the item stays open. */
export async function sendItem(c: ItemContext, item: ItemRow): Promise<'stopped' | void> {
  const { deps, tally, actor } = c;
  const itemId = item.id;
  const decided = outcomeWithoutSend(item, actor);
  if (decided?.outcome === 'interrupted') {
    // Our claim, its handler gone: the provider may tell what became of the send (interrupted-fate.ts).
    const tool = await getTool(deps.db, item.tool);
    const provider = deps.providers.has(tool.provider) ? deps.providers.get(tool.provider) : null;
    const resend = (claim: SentItem & { idempotencyKey: string }) =>
      sendClaimed(c, item, tool.provider, provider!, claim, item.target);
    if (provider && (await learnInterruptedFate(c, item, provider, resend))) return;
  }
  if (decided) return tally.record(itemId, decided.outcome, decided.note);

  const tool = await getTool(deps.db, item.tool);
  let provider: RegisteredProvider;
  try {
    provider = deps.providers.get(tool.provider);
  } catch (error) {
    // Nothing was claimed: the item stays open for a retry once the provider is configured.
    throw new RetryChunk((error as Error).message);
  }
  await deps.limiter?.acquire(tool.provider);

  // F3: the same claim as the runtime's (claimEffect), gated by the replay's status, for the key
  // frozen in the item.
  const ts = performance.now();
  const answer = await claimReplayTarget(
    { db: deps.db, actor },
    {
      replayId: c.replayId,
      runId: c.runId,
      tool: item.tool,
      action: item.action,
      recordId: item.record_id,
      target: item.target,
      frozenKey: item.key,
      expectedFingerprint: item.fp,
    },
  );
  span('claim', ts);
  switch (answer.outcome) {
    case 'stopped':
      return 'stopped'; // paused or cancelled: nothing claimed, the item stays open
    case 'action_unregistered':
      return tally.record(itemId, 'skipped', `action "${item.action}" is no longer registered for tool "${tool.name}"`);
    case 'key_changed':
      return tally.record(
        itemId,
        'skipped',
        `the key derived now (${answer.key}) differs from the frozen one: not sent (K2)`,
      );
    case 'moved':
      return tally.record(
        itemId,
        'skipped',
        `changed while waiting to send: now ${answer.now} by ${answer.changedBy ?? 'nobody'} (was ${item.fp}) (F4)`,
      );
    case 'answered':
      break;
    default:
      return answer satisfies never;
  }
  const claim = answer.claim;
  if (!claim.claimed) {
    // Another handler of this same replay holds it (pg-boss ran the chunk twice): its outcome stands;
    // if that handler dies, the next run of the chunk finds the claim ours and reports it interrupted.
    if (claim.state === 'pending' && claim.changedBy === actor.label) return;
    return tally.record(itemId, 'skipped', `lost the claim: ${claim.state} by ${claim.changedBy} (F3)`);
  }
  const sent = { itemId, key: claim.key, epoch: claim.epoch, attemptId: claim.attemptId };
  await sendClaimed(c, item, tool.provider, provider, { ...sent, idempotencyKey: claim.idempotencyKey }, claim.target);
}

/** The send of a claimed item with the claim's idempotency key (R2), and its answer settled. Also the
 *  re-send of an interrupted item inside the provider's idempotency window (interrupted-fate.ts). */
export async function sendClaimed(
  c: ItemContext,
  item: ItemRow,
  providerName: string,
  provider: RegisteredProvider,
  claim: SentItem & { idempotencyKey: string },
  target: string,
): Promise<void> {
  const { deps, tally } = c;
  const sent: SentItem = { itemId: claim.itemId, key: claim.key, epoch: claim.epoch, attemptId: claim.attemptId };
  const itemId = claim.itemId;
  const tool = { provider: providerName };
  const payload = (deps.payload ?? defaultPayload)({
    tool: item.tool,
    action: item.action,
    recordId: item.record_id,
    target,
  });
  let raw: RawResponse;
  const ts = performance.now();
  try {
    const timeout =
      (deps.providers.has(tool.provider) ? deps.providers.settings(tool.provider).sendTimeoutSeconds : undefined) ?? 30;
    raw = await traced('provider.send', { 'ledger.provider': tool.provider, 'ledger.key': claim.key }, () =>
      provider.send(
        { key: claim.key, epoch: claim.epoch, idempotencyKey: claim.idempotencyKey, target, payload },
        AbortSignal.timeout(timeout * 1000),
      ),
    );
    observeProviderCall(tool.provider, 'answered', (performance.now() - ts) / 1000);
  } catch (error) {
    const notSent = isCallFailure(error) && error.providerSent === 'no';
    observeProviderCall(tool.provider, notSent ? 'not_sent' : 'ambiguous', (performance.now() - ts) / 1000);
    if (notSent) {
      const evidence = { error: error.message, ...error.detail, sent: 'no' };
      // A permanent refusal (the webhook's host is not allowed for the tool) fails the same way on every
      // retry: retrying the chunk would keep the replay from ever finishing. The item fails with it.
      if (error.detail.permanent === true)
        return settle(c, sent, { to: 'failed', evidence }, { outcome: 'failed', note: `refused: ${error.message}` });
      await settle(c, sent, { to: 'failed', evidence }, null);
      throw new RetryChunk(`provider ${tool.provider} unreachable: ${error.message}`);
    }
    // Ambiguous: the executor may not decide unknown; the key stays pending for the reconciler (S4).
    deps.log?.(`ambiguous send for ${claim.key}: ${(error as Error).message}`);
    return tally.record(
      itemId,
      'unknown',
      `ambiguous call, left pending for the reconciler: ${(error as Error).message}`,
    );
  }
  span('send', ts);
  await settleVerdict(c, sent, provider, tool.provider, raw);
}
