// Z3/A1 on the approvals page: approving takes an optional comment, rejecting needs a reason, and a
// decided request's card names who decided and what they wrote (read from the decision's audit entry).
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, suffix, userActor } from '../helpers/factories.ts';
import { decideBump } from '@/lib/approvals/decide-bump.ts';
import { requestBump } from '@/lib/approvals/request-bump.ts';
import { approvalsPage } from '@/lib/read-models/admin.ts';
import { claimEffect, completeEffect, LedgerError, type Actor } from '@/lib/ledger/index.ts';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';

const t = await createTestDatabase({ poolSize: 6 });
const runtime: Actor = { kind: 'runtime', id: 'rt', label: 'rt', workflows: ['*'] };
const alice = userActor('operator');
const bob = userActor('operator');

async function openRequest() {
  const tool = await makeTool(t.db);
  const run = await makeRun(t.db);
  const c = await claimEffect(
    { db: t.db, actor: runtime },
    { runId: run.runId, tool: tool.name, action: 'receipt', recordId: 'r1', target: `d-${suffix()}@example.com` },
  );
  if (!c.claimed) throw new Error('lost');
  await completeEffect({ db: t.db, actor: runtime }, { key: c.key, receipt: 'm1' });
  const r = await requestBump({ db: t.db, actor: alice }, { keys: [c.key], reason: 'resend after template fix' });
  if (r.mode !== 'requested') throw new Error('expected a four-eyes request');
  return r;
}

const card = async (id: string) => (await approvalsPage(t.db, EVERY_WORKFLOW)).find((r) => r.id === id)!;

describe('four-eyes decisions on the approvals page', () => {
  it('Z3: a rejection without a reason is refused and changes nothing; with one, the card shows who rejected and why', async () => {
    const r = await openRequest();
    const bare = await decideBump(
      { db: t.db, actor: bob },
      { requestId: r.requestId, setHash: r.setHash, decision: 'reject' },
    ).catch((e) => e);
    expect(bare).toBeInstanceOf(LedgerError);
    expect(bare).toMatchObject({ code: 'validation', details: { field: 'reason' } });
    expect(await card(r.requestId)).toMatchObject({ status: 'open', decidedBy: null, decisionNote: null });

    await decideBump(
      { db: t.db, actor: bob },
      { requestId: r.requestId, setHash: r.setHash, decision: 'reject', reason: 'the template is still wrong' },
    );
    expect(await card(r.requestId)).toMatchObject({
      status: 'rejected',
      decidedBy: bob.id,
      decisionNote: 'the template is still wrong',
    });
  });

  it('Z3: an approval carries its optional comment to the card, and none when none was given', async () => {
    const withComment = await openRequest();
    await decideBump(
      { db: t.db, actor: bob },
      {
        requestId: withComment.requestId,
        setHash: withComment.setHash,
        decision: 'approve',
        reason: 'checked the fix',
      },
    );
    const without = await openRequest();
    await decideBump(
      { db: t.db, actor: bob },
      { requestId: without.requestId, setHash: without.setHash, decision: 'approve' },
    );
    expect(await card(withComment.requestId)).toMatchObject({ status: 'approved', decisionNote: 'checked the fix' });
    expect(await card(without.requestId)).toMatchObject({ status: 'approved', decisionNote: null });
  });
});
