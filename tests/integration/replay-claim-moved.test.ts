// F4 at the claim: the executor reads a window of items, then waits for the provider's rate limit
// (minutes, behind a slow provider) before it claims each one. A target another actor moves in that
// wait must not be sent: the claim compares the target's state with the one the executor read, under
// the claim's own locks (ledger_claim_frozen).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimEffect, failEffect } from '@/lib/ledger/index.ts';
import { requestReplay } from '@/lib/replay/index.ts';
import { RateLimiter } from '@/lib/replay/rate-limit.ts';
import { runChunk } from '@/lib/replay/run-chunk.ts';
import { executorActor } from '@/lib/replay/executor.ts';
import type { ProviderRegistry } from '@/lib/providers/registry.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { userActor } from '../helpers/factories.ts';
import { startTestSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.ts';
import { makeCampaign, smtpRegistry, type Campaign } from './replay-fixtures.ts';

const t = await createTestDatabase({ poolSize: 6 });
let smtp: TestSmtpServer;
let providers: ProviderRegistry;

beforeAll(async () => {
  smtp = await startTestSmtpServer();
  providers = smtpRegistry(smtp);
});
afterAll(async () => {
  await providers?.close();
  await smtp?.close();
});

/** A rate limiter whose first wait is the moment a colleague's agent retries some targets itself. */
class AgentActsDuringTheWait extends RateLimiter {
  private acted = false;
  constructor(private readonly act: () => Promise<void>) {
    super(t.db, () => undefined);
  }
  override async acquire(): Promise<undefined> {
    if (!this.acted) {
      this.acted = true;
      await this.act();
    }
    return undefined;
  }
}

/** The agent's own retry of a target: claimed, then failed again by the provider. */
async function agentRetriesAndFails(c: Campaign, target: Campaign['targets'][number]) {
  const ctx = { db: t.db, actor: c.runtime };
  const claim = await claimEffect(ctx, {
    runId: c.runId,
    tool: c.tool,
    action: 'campaign_welcome',
    recordId: target.recordId,
    target: target.target,
  });
  if (!claim.claimed) throw new Error(`the agent's claim of ${target.target} lost`);
  await failEffect(ctx, { key: claim.key, epoch: claim.epoch, evidence: { smtpStatus: 550 } });
  return claim.key;
}

describe('forced replay: a target moved between the window read and the claim', () => {
  it('F4: a target failed again, or first sent and failed, while the handler waited for the rate limit is skipped, not sent; the others go out', async () => {
    const c = await makeCampaign(t.db, { not_sent: 2, failed: 1, awaiting_claim: 1 }, { fourEyesReplay: false });
    const r = await requestReplay(
      { db: t.db, actor: userActor('operator') },
      { runId: c.runId, confirmCount: 4, reason: 'crashed campaign' },
    );
    await t.owner(`UPDATE replay SET status = 'running' WHERE id = $1`, [r.replayId]);
    const {
      rows: [range],
    } = await t.owner<{ from_id: string; to_id: string }>(
      `SELECT min(id)::text AS from_id, max(id)::text AS to_id FROM replay_item WHERE replay_id = $1`,
      [r.replayId],
    );

    const untouched = c.targets.find((x) => x.state === 'not_sent')!;
    const moved = c.targets.filter((x) => x !== untouched);
    const movedKeys: string[] = [];
    const limiter = new AgentActsDuringTheWait(async () => {
      for (const x of moved) movedKeys.push(await agentRetriesAndFails(c, x));
    });
    await runChunk(
      { db: t.db, providers, limiter, itemConcurrency: 1 },
      { replayId: r.replayId, fromId: range!.from_id, toId: range!.to_id },
    );

    const items = await t.db.replayItem.findMany({ where: { replayId: r.replayId } });
    const byTarget = new Map(items.map((i) => [i.target, i]));
    expect(byTarget.get(untouched.target)).toMatchObject({ outcome: 'sent' });
    for (const x of moved) {
      const item = byTarget.get(x.target)!;
      expect(item.outcome).toBe('skipped');
      expect(item.note).toMatch(new RegExp(`changed while waiting to send: now failed@1@\\S+ by ${c.runtime.label}`));
    }
    const sentTo = smtp.countByRecipient();
    expect(sentTo.get(untouched.target)).toBe(1);
    for (const x of moved) expect(sentTo.get(x.target) ?? 0).toBe(0);

    // Nothing was claimed for a moved target: it stays failed by the agent, with no executor transition.
    const executor = executorActor(r.replayId);
    const claims = await t.owner<{ n: string }>(
      `SELECT count(*)::text AS n FROM effect_transition WHERE key = ANY($1) AND actor_id = $2`,
      [movedKeys, executor.id],
    );
    expect(claims.rows[0]!.n).toBe('0');
    const heads = await t.db.effectKey.findMany({ where: { key: { in: movedKeys } } });
    expect(heads.map((h) => [h.state, h.changedBy])).toEqual(movedKeys.map(() => ['failed', c.runtime.label]));
  });
});
