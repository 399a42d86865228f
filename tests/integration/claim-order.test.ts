// S1 S3: which claim is the newest of a (key, epoch) is the order in which the claims took the key,
// not their transactions' start times. A claim whose transaction started earlier but waited (in a
// claim batch, behind another lock) can take a freed key after a claim that started later: the
// late report of that earlier-taken claim must not move the one that holds the key now.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { claimEffect, completeEffect, failEffect, LedgerError } from '@/lib/ledger/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, runtimeActor } from '../helpers/factories.ts';

const t = await createTestDatabase({ poolSize: 4 });
const waiting = new pg.Client({ connectionString: t.appUrl });
await waiting.connect();
afterAll(() => waiting.end());

describe('the newest claim of a key', () => {
  it("S1 S3: a claim taken last but begun first holds the key: the earlier claim's late report is refused, its own report lands", async () => {
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    const agent = { db: t.db, actor: runtimeActor() };
    const intent = {
      runId: run.runId,
      tool: tool.name,
      action: 'campaign_welcome',
      recordId: 'r-1',
      target: 'order@example.com',
    };
    const first = await claimEffect(agent, intent);
    if (!first.claimed) throw new Error('first claim lost');
    await failEffect(agent, {
      key: first.key,
      epoch: first.epoch,
      attemptId: first.attemptId,
      evidence: { smtp: 550 },
    });

    // A transaction begins (its now() is fixed from here), then waits while another claim takes the
    // freed key and its provider refuses it at once.
    await waiting.query('BEGIN');
    await waiting.query('SELECT now()');
    const meanwhile = await claimEffect(agent, intent);
    if (!meanwhile.claimed) throw new Error('second claim lost');
    await failEffect(agent, {
      key: meanwhile.key,
      epoch: meanwhile.epoch,
      attemptId: meanwhile.attemptId,
      evidence: { smtp: 550 },
    });

    // The waiting transaction now takes the key, failed again: it holds it from here on.
    const head = await t.db.effectKey.findUniqueOrThrow({ where: { key: first.key } });
    const { rows } = await waiting.query<{ claimed: boolean; attempt_id: string }>(
      `SELECT claimed, attempt_id FROM ledger_claim($1, $2, $3, $4, $5, $6::"TargetType", $7, $8::uuid, 'runtime', 'late-starter', 'late starter', 300, '{}'::jsonb)`,
      [head.key, head.tool, head.action, head.recordId, head.target, head.targetType, head.triggerId, head.runId],
    );
    await waiting.query('COMMIT');
    expect(rows[0]!.claimed).toBe(true);
    const holder = rows[0]!.attempt_id;

    // A repeat of the earlier claim's failure report (its reply was lost) must not free the holder's claim.
    const late = await failEffect(agent, {
      key: first.key,
      epoch: first.epoch,
      attemptId: meanwhile.attemptId,
      evidence: { smtp: 550, repeated: true },
    }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(LedgerError);
    expect((late as LedgerError).message).toMatch(/newer claim/);
    expect((await t.db.effect.findFirstOrThrow({ where: { key: first.key } })).state).toBe('pending');

    const done = await completeEffect(
      { db: t.db, actor: runtimeActor() },
      { key: first.key, epoch: first.epoch, attemptId: holder, receipt: 'msg-holder' },
    );
    expect(done).toMatchObject({ state: 'done' });
  });
});
