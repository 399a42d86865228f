// C1 + C2 with a provider that finds messages by their idempotency key (the sandbox): an agent that
// died after its send and before its report left no receipt, yet the reconciler asks the provider by
// the key the claim gave it: a message found delivered completes the key with the provider's own
// receipt; a key the provider never saw stays as it is inside the settle window and becomes unknown,
// for support, after it.
import { afterAll, describe, expect, it } from 'vitest';
import { claimEffect } from '@/lib/ledger/index.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import { SandboxProvider, startSandbox } from '@/lib/providers/sandbox/index.ts';
import { reconcileOnce } from '@/lib/replay/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { makeCampaign } from './replay-fixtures.ts';

const sandbox = await startSandbox();
afterAll(() => sandbox.stop());

describe('the reconciler looks a lost send up by its idempotency key', () => {
  it('C1/C2: a send the agent never reported is found by its idempotency key and done; one never sent waits, then goes to support', async () => {
    const t = await createTestDatabase({ poolSize: 6 });
    const c = await makeCampaign(t.db, { not_sent: 2 }, { provider: 'sandbox', settleWindowSeconds: 60 });
    const provider = new SandboxProvider(sandbox.url);
    const claims = [];
    for (const x of c.targets) {
      const cl = await claimEffect(
        { db: t.db, actor: c.runtime },
        { runId: c.runId, tool: c.tool, action: 'campaign_welcome', recordId: x.recordId, target: x.target },
      );
      if (!cl.claimed) throw new Error('claim lost');
      claims.push(cl);
    }
    // The first send reached the provider; the agent died before it could report the answer.
    const [sent, lost] = claims as [(typeof claims)[0], (typeof claims)[0]];
    await provider.send({
      key: sent.key,
      epoch: sent.epoch,
      idempotencyKey: sent.idempotencyKey,
      target: sent.target,
      payload: { subject: 'Welcome', body: 'Hello' },
    });
    await t.owner(`UPDATE effect SET lease_expires_at = now() - interval '1 second'`);
    const providers = new ProviderRegistry({}, {}, { sandbox: provider });

    const first = await reconcileOnce({ db: t.db, providers });
    expect(first).toMatchObject({ examined: 2, done: 1, waiting: 1, unknown: 0 });
    const done = await t.db.effect.findFirstOrThrow({ where: { key: sent.key } });
    expect(done.state).toBe('done');
    expect(done.receipt).toBe(sandbox.deliveries[0]!.messageId);
    const evidence = await t.db.effectTransition.findFirstOrThrow({ where: { key: sent.key, toState: 'done' } });
    expect(evidence.evidence).toMatchObject({ reconciler: 'message found by its idempotency key' });

    // Past the settle window, the key the provider never saw is unknown, for support (C2), never freed.
    await t.owner(`UPDATE attempt SET started_at = now() - interval '10 minutes' WHERE key = $1`, [lost.key]);
    expect(await reconcileOnce({ db: t.db, providers })).toMatchObject({ examined: 1, unknown: 1 });
    const unknown = await t.db.effectTransition.findFirstOrThrow({ where: { key: lost.key, toState: 'unknown' } });
    expect(unknown.evidence).toMatchObject({
      reconciler: 'lookup miss after the settle window',
      idempotencyKey: lost.idempotencyKey,
    });
    expect(sandbox.deliveries).toHaveLength(1);
  });
});
