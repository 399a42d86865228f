// P1: an approved plan is frozen by the database; P2: approval records who and when, and the
// approver is not the author where the tool asks for it.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { approvePlan, LedgerError, rejectPlan, submitPlan, type Actor } from '@/lib/ledger/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, runtimeActor, snapshot, userActor } from '../helpers/factories.ts';

const t = await createTestDatabase({ poolSize: 10 });

async function submitted(author: Actor, options: { distinctApprover?: boolean; items?: number } = {}) {
  const tool = await makeTool(t.db, { distinctApprover: options.distinctApprover ?? true });
  const run = await makeRun(t.db);
  const items = Array.from({ length: options.items ?? 3 }, (_, i) => ({
    tool: tool.name,
    action: 'campaign_welcome',
    recordId: `cust-${i}`,
    target: `User${i}@Example.com`,
  }));
  const plan = await submitPlan({ db: t.db, actor: author }, { runId: run.runId, items });
  return { ...plan, tool: tool.name };
}

async function sqlError(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!error) throw new Error('expected the database to refuse');
  return error as { code?: string; message: string };
}

describe('P1: an approved plan is immutable, enforced by the database', () => {
  it('P1: after approvePlan, INSERT, UPDATE and DELETE on its items are refused even as raw SQL from the app role', async () => {
    const plan = await submitted(runtimeActor());
    await approvePlan({ db: t.db, actor: userActor('operator') }, { planId: plan.planId, itemsHash: plan.itemsHash });
    const before = await snapshot(t.db);
    const insert = await sqlError(
      t.db.$executeRawUnsafe(
        `INSERT INTO plan_item (plan_id, run_id, key, tool, action, record_id, target, target_type)
       SELECT plan_id, run_id, key || 'x', tool, action, record_id, 'extra@example.com', target_type FROM plan_item WHERE plan_id = $1::uuid LIMIT 1`,
        plan.planId,
      ),
    );
    expect(insert.message).toMatch(/approved and frozen/);
    const update = await sqlError(
      t.db.$executeRawUnsafe(
        `UPDATE plan_item SET target = 'attacker@example.com' WHERE plan_id = $1::uuid`,
        plan.planId,
      ),
    );
    // The app role holds no UPDATE on items at all (they are only ever inserted).
    expect(update.message).toMatch(/permission denied for table plan_item/);
    // The app role has no DELETE grant at all (T1); the trigger refuses it for the owner too.
    const del = await sqlError(t.db.$executeRawUnsafe(`DELETE FROM plan_item WHERE plan_id = $1::uuid`, plan.planId));
    expect(del.message).toMatch(/permission denied|approved and frozen/);
    const ownerDelete = await sqlError(t.owner(`DELETE FROM plan_item WHERE plan_id = $1::uuid`, [plan.planId]));
    expect(ownerDelete.code).toBe('EL001');
    const ownerUpdate = await sqlError(
      t.owner(`UPDATE plan_item SET record_id = 'other' WHERE plan_id = $1::uuid`, [plan.planId]),
    );
    expect(ownerUpdate.code).toBe('EL001');
    // Through Prisma as well.
    await expect(
      t.db.planItem.updateMany({ where: { planId: plan.planId }, data: { target: 'x@example.com' } }),
    ).rejects.toThrow(/permission denied/);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('P1: an item of another plan cannot be moved into an approved plan', async () => {
    const frozen = await submitted(runtimeActor());
    await approvePlan(
      { db: t.db, actor: userActor('operator') },
      { planId: frozen.planId, itemsHash: frozen.itemsHash },
    );
    const open = await submitted(runtimeActor());
    const error = await sqlError(
      t.db.$executeRawUnsafe(
        `UPDATE plan_item SET plan_id = $1::uuid WHERE plan_id = $2::uuid`,
        frozen.planId,
        open.planId,
      ),
    );
    expect(error.message).toMatch(/permission denied for table plan_item/);
    // Nor by the owner: the frozen plan's trigger refuses whoever asks.
    const ownerMove = await sqlError(
      t.owner(`UPDATE plan_item SET plan_id = $1::uuid WHERE plan_id = $2::uuid`, [frozen.planId, open.planId]),
    );
    expect(ownerMove.code).toBe('EL001');
  });

  it('P1: the approved plan row itself is frozen: status, hash, approver and count cannot change', async () => {
    const plan = await submitted(runtimeActor());
    await approvePlan({ db: t.db, actor: userActor('operator') }, { planId: plan.planId, itemsHash: plan.itemsHash });
    const before = await snapshot(t.db);
    for (const set of [
      `status = 'submitted'`,
      `items_hash = repeat('0', 64)`,
      `approved_by_id = gen_random_uuid()`,
      `item_count = 99`,
    ]) {
      // The decision columns are the app role's to write, so the freeze refuses them; the others it
      // may not write at all.
      const error = await sqlError(t.db.$executeRawUnsafe(`UPDATE plan SET ${set} WHERE id = $1::uuid`, plan.planId));
      expect(error.message).toMatch(/approved and frozen|permission denied for table plan/);
      const ownerError = await sqlError(t.owner(`UPDATE plan SET ${set} WHERE id = $1::uuid`, [plan.planId]));
      expect(ownerError.code).toBe('EL001');
    }
    expect((await sqlError(t.owner(`DELETE FROM plan WHERE id = $1::uuid`, [plan.planId]))).code).toBe('EL001');
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('P1: the frozen rows are (target, record, action, key) with the normalized target', async () => {
    const plan = await submitted(runtimeActor(), { items: 2 });
    await approvePlan({ db: t.db, actor: userActor('operator') }, { planId: plan.planId, itemsHash: plan.itemsHash });
    const items = await t.db.planItem.findMany({ where: { planId: plan.planId }, orderBy: { recordId: 'asc' } });
    expect(items.map((i) => [i.recordId, i.action, i.target])).toEqual([
      ['cust-0', 'campaign_welcome', 'user0@example.com'],
      ['cust-1', 'campaign_welcome', 'user1@example.com'],
    ]);
    expect(items.every((i) => i.key.startsWith('v1/') && i.key.endsWith(encodeURIComponent(i.target)))).toBe(true);
  });

  it('P1: a plan whose items changed after review is not approved (the hash is checked against the items themselves)', async () => {
    const plan = await submitted(runtimeActor());
    // Someone edits a submitted plan's item directly (only the owner still can): the stored hash no
    // longer describes the set.
    await t.owner(
      `UPDATE plan_item SET target = 'attacker@example.com', key = key || 'x' WHERE id = (SELECT min(id) FROM plan_item WHERE plan_id = $1::uuid)`,
      [plan.planId],
    );
    const before = await snapshot(t.db);
    const error = await approvePlan(
      { db: t.db, actor: userActor('operator') },
      { planId: plan.planId, itemsHash: plan.itemsHash },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgerError);
    expect((error as LedgerError).code).toBe('conflict');
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('P1: an item edit still uncommitted when the approval starts is never frozen under the reviewed hash', async () => {
    const plan = await submitted(runtimeActor());
    // A second session (the owner's: the app role may not edit items) edits an item of the submitted
    // plan and holds its transaction open.
    const editor = new pg.Client({ connectionString: t.ownerUrl });
    await editor.connect();
    try {
      await editor.query('BEGIN');
      const [{ pid }] = (await editor.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [
        { pid: number },
      ];
      await editor.query(
        `UPDATE plan_item SET target = 'attacker@example.com', key = key || 'x' WHERE id = (SELECT min(id) FROM plan_item WHERE plan_id = $1::uuid)`,
        [plan.planId],
      );
      let settled = false;
      const approval = approvePlan(
        { db: t.db, actor: userActor('operator') },
        { planId: plan.planId, itemsHash: plan.itemsHash },
      )
        .then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        )
        .finally(() => {
          settled = true;
        });
      // Wait (no sleep) until the approval either finished or is blocked behind the editor's lock.
      for (;;) {
        if (settled) break;
        const waiting = await t.owner(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND $1 = ANY (pg_blocking_pids(pid))`,
          [pid],
        );
        if (waiting.rows[0]!.n > 0) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      const commit = await editor.query('COMMIT').then(
        () => 'committed',
        (e: Error) => e.message,
      );
      const outcome = await approval;
      const status = (await t.db.plan.findUniqueOrThrow({ where: { id: plan.planId } })).status;
      const targets = (await t.db.planItem.findMany({ where: { planId: plan.planId } })).map((i) => i.target);
      // Either the edit lost (refused: the plan was frozen first) or the approval lost (the set changed).
      if (status === 'approved') {
        expect(commit).not.toBe('committed');
        expect(targets).not.toContain('attacker@example.com');
      } else {
        expect(outcome).toMatchObject({ error: { code: 'conflict' } });
      }
    } finally {
      await editor.end();
    }
  });

  it('P1: an item whose target was edited without its key is not approved either', async () => {
    const plan = await submitted(runtimeActor());
    await t.owner(
      `UPDATE plan_item SET target = 'attacker@example.com' WHERE id = (SELECT min(id) FROM plan_item WHERE plan_id = $1::uuid)`,
      [plan.planId],
    );
    const before = await snapshot(t.db);
    const error = await approvePlan(
      { db: t.db, actor: userActor('operator') },
      { planId: plan.planId, itemsHash: plan.itemsHash },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'conflict' });
    expect((error as Error).message).toMatch(/no longer matches its key/);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('P1: approval with a hash other than the reviewed set is refused', async () => {
    const plan = await submitted(runtimeActor());
    const error = await approvePlan(
      { db: t.db, actor: userActor('operator') },
      { planId: plan.planId, itemsHash: 'a'.repeat(64) },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'conflict' });
    expect((await t.db.plan.findUniqueOrThrow({ where: { id: plan.planId } })).status).toBe('submitted');
  });
});

describe('P2: approval records who and when; the approver is not the author where the tool says so', () => {
  it('P2: approval records the approver and the time, and is audited', async () => {
    const plan = await submitted(runtimeActor());
    const operator = userActor('operator');
    const approved = await approvePlan(
      { db: t.db, actor: operator, request: { ip: '192.0.2.4', userAgent: 'console', requestId: 'req-p2' } },
      { planId: plan.planId, itemsHash: plan.itemsHash, reason: 'checked the list' },
    );
    expect(approved).toMatchObject({ status: 'approved', approvedById: operator.id });
    expect(approved.approvedAt).toBeInstanceOf(Date);
    const entry = await t.db.auditEntry.findFirstOrThrow({ where: { subjectId: plan.planId, action: 'plan.approve' } });
    expect(entry).toMatchObject({
      actorId: operator.id,
      actorRole: 'operator',
      beforeState: 'submitted',
      afterState: 'approved',
      reason: 'checked the list',
      ip: '192.0.2.4',
      requestId: 'req-p2',
      outcome: 'ok',
    });
  });

  it('P2: the author may not approve their own plan when the tool asks for a distinct approver: refused, audited, nothing changed', async () => {
    const author = userActor('operator');
    const plan = await submitted(author, { distinctApprover: true });
    const before = await snapshot(t.db);
    const error = await approvePlan(
      { db: t.db, actor: author },
      { planId: plan.planId, itemsHash: plan.itemsHash },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'forbidden' });
    expect((error as Error).message).toMatch(/not be its author/);
    expect(await snapshot(t.db)).toEqual(before);
    expect(
      await t.db.auditEntry.count({ where: { subjectId: plan.planId, outcome: 'refused', actorId: author.id } }),
    ).toBe(1);
    const other = await approvePlan(
      { db: t.db, actor: userActor('operator') },
      { planId: plan.planId, itemsHash: plan.itemsHash },
    );
    expect(other.status).toBe('approved');
  });

  it('P2: where the tool does not ask for it, the author may approve', async () => {
    const author = userActor('operator');
    const plan = await submitted(author, { distinctApprover: false });
    const approved = await approvePlan({ db: t.db, actor: author }, { planId: plan.planId, itemsHash: plan.itemsHash });
    expect(approved).toMatchObject({ status: 'approved', approvedById: author.id });
  });

  it('P2: only operators approve plans', async () => {
    const plan = await submitted(runtimeActor());
    for (const actor of [userActor('support'), userActor('auditor'), userActor('admin'), runtimeActor()]) {
      const error = await approvePlan({ db: t.db, actor }, { planId: plan.planId, itemsHash: plan.itemsHash }).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'forbidden' });
    }
    expect((await t.db.plan.findUniqueOrThrow({ where: { id: plan.planId } })).status).toBe('submitted');
  });

  it('P2: an operator rejects a submitted plan with a reason: who, when and why are kept and audited; it can no longer be approved', async () => {
    const plan = await submitted(runtimeActor());
    const operator = userActor('operator');
    const noReason = await rejectPlan({ db: t.db, actor: operator }, { planId: plan.planId, reason: ' ' }).catch(
      (e: unknown) => e,
    );
    expect(noReason).toMatchObject({ code: 'validation', details: { field: 'reason' } });
    const refused = await rejectPlan(
      { db: t.db, actor: userActor('support') },
      { planId: plan.planId, reason: 'no' },
    ).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'forbidden' });
    await rejectPlan(
      { db: t.db, actor: operator },
      { planId: plan.planId, reason: 'the list includes unsubscribed people' },
    );
    const row = await t.db.plan.findUniqueOrThrow({ where: { id: plan.planId } });
    expect(row).toMatchObject({
      status: 'rejected',
      rejectedById: operator.id,
      rejectionReason: 'the list includes unsubscribed people',
    });
    expect(row.rejectedAt).toBeInstanceOf(Date);
    const audit = await t.db.auditEntry.findMany({ where: { subjectId: plan.planId, action: 'plan.reject' } });
    expect(audit.map((a) => a.outcome).sort()).toEqual(['ok', 'refused']);
    const late = await approvePlan(
      { db: t.db, actor: operator },
      { planId: plan.planId, itemsHash: plan.itemsHash },
    ).catch((e: unknown) => e);
    expect(late).toMatchObject({ code: 'conflict' });
    const again = await rejectPlan({ db: t.db, actor: operator }, { planId: plan.planId, reason: 'twice' }).catch(
      (e: unknown) => e,
    );
    expect(again).toMatchObject({ code: 'conflict' });
  });
});
