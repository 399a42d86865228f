// S5: an operator excludes a planned target before anything was sent to it. Its key comes from the
// approved plan row, is created revoked with its transition and audit entry, and from then on no
// claim (runtime or replay) takes it; a key outside any approved plan is not revoked by this path.
import { beforeAll, describe, expect, it } from 'vitest';
import { claimEffect, LedgerError, revokeEffect } from '@/lib/ledger/index.ts';
import { previewReplay } from '@/lib/replay/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { auditChain, snapshot, userActor } from '../helpers/factories.ts';
import { makeCampaign } from './replay-fixtures.ts';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

describe('S5: revoking a planned target that was never sent', () => {
  it('S5 F2: the key is created revoked from the plan row, audited with the reason; no claim takes it and a replay skips it', async () => {
    const campaign = await makeCampaign(t.db, { not_sent: 3 });
    const never = campaign.targets[1]!;
    const plan = await t.db.planItem.findFirstOrThrow({ where: { runId: campaign.runId, target: never.target } });
    const operator = userActor('operator');
    const result = await revokeEffect(
      { db: t.db, actor: operator, request: { ip: '198.51.100.7', requestId: 'req-planned' } },
      { key: plan.key, reason: 'the customer withdrew before the send' },
    );
    expect(result).toMatchObject({ key: plan.key, epoch: 1, from: null, state: 'revoked', runId: campaign.runId });
    const effect = await t.db.effect.findFirstOrThrow({ where: { key: plan.key } });
    expect(effect).toMatchObject({ epoch: 1, state: 'revoked', changedBy: operator.label });
    const transition = await t.db.effectTransition.findFirstOrThrow({ where: { key: plan.key } });
    expect(transition).toMatchObject({
      fromState: null,
      toState: 'revoked',
      reason: 'the customer withdrew before the send',
    });
    const [entry] = await auditChain(t.db, `effect:${plan.key}`);
    expect(entry).toMatchObject({
      action: 'effect.revoke',
      outcome: 'ok',
      afterState: 'revoked',
      actorId: operator.id,
    });

    const claim = await claimEffect(
      { db: t.db, actor: campaign.runtime },
      {
        runId: campaign.runId,
        tool: campaign.tool,
        action: 'campaign_welcome',
        recordId: never.recordId,
        target: never.target,
      },
    );
    expect(claim).toMatchObject({ claimed: false, state: 'revoked' });
    const preview = await previewReplay({ db: t.db }, { runId: campaign.runId });
    expect(preview.counts).toMatchObject({ not_sent: 2, revoked: 1 });
    expect(preview.willSend).toBe(2);
  });

  it('S5: a key in no approved plan is not found, and nothing is written', async () => {
    const before = await snapshot(t.db);
    const error = await revokeEffect(
      { db: t.db, actor: userActor('operator') },
      { key: 'v1:nobody:nothing', reason: 'a typo' },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgerError);
    expect((error as LedgerError).code).toBe('not_found');
    expect(await snapshot(t.db)).toEqual(before);
  });
});
