// S7 on the database: every transition not in the table is refused with a clear error, changes
// nothing (row counts, states, the subject's audit chain head) and is itself audited (A4).
import { describe, expect, it } from 'vitest';
import {
  bumpEpoch,
  checkTransition,
  LedgerError,
  registerEpochPolicy,
  transitionEffect,
  type Actor,
  type EffectState,
  type Move,
} from '@/lib/ledger/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import {
  executorActor,
  makeEffect,
  makeRun,
  makeTool,
  policyActor,
  reconcilerActor,
  runtimeActor,
  snapshot,
  userActor,
  type TestState,
} from '../helpers/factories.ts';

const t = await createTestDatabase({ poolSize: 10 });

registerEpochPolicy({ name: 's7-refusals-policy', description: 'test', inputsFrom: ['workflow'] });

const STATES: TestState[] = ['pending', 'done', 'failed', 'unknown', 'revoked', 'stuck', 'awaiting'];
const MOVES: Move[] = ['pending', 'done', 'failed', 'unknown', 'revoked', 'stuck', 'new_epoch'];

function parties(runtime: Actor): Actor[] {
  return [
    userActor('admin'),
    userActor('operator'),
    userActor('support'),
    userActor('auditor'),
    runtime,
    executorActor(),
    reconcilerActor(),
    policyActor('s7-refusals-policy'),
    { kind: 'system', id: 'sys', label: 'system' },
  ];
}

function partyName(actor: Actor): string {
  return actor.kind === 'user' ? actor.role : actor.kind;
}

/** Whether the table (and the "awaiting its claim" rule: nobody holds it, so only revoke) allows it. */
function allowed(state: TestState, move: Move, actor: Actor): boolean {
  if (state === 'awaiting')
    return move === 'revoked' && checkTransition('pending', move, partyName(actor) as never).allowed;
  return checkTransition(state, move, partyName(actor) as never).allowed;
}

async function attempt(actor: Actor, key: string, move: Move): Promise<unknown> {
  const ctx = { db: t.db, actor, request: { ip: '198.51.100.1', userAgent: 'vitest', requestId: 'req-s7' } };
  if (move === 'new_epoch')
    return bumpEpoch(ctx, { key, reason: 'supersede', inputs: { campaign: { value: 'spring', source: 'workflow' } } });
  return transitionEffect(ctx, {
    key,
    to: move as EffectState,
    action: 'effect.report',
    reason: 'a reason',
    receipt: 'rcpt-1',
    evidence: { status: 500 },
  });
}

describe('S7: refused transitions change nothing and are audited', () => {
  it('S7: every state x move x party outside the table is refused, leaves the database unchanged, and writes one refused audit entry (A4)', async () => {
    const tool = (await makeTool(t.db)).name;
    const runId = (await makeRun(t.db)).runId;
    const runtime = runtimeActor();
    const effects = new Map<TestState, string>();
    for (const state of STATES) effects.set(state, (await makeEffect(t.db, state, { tool, runId, runtime })).key);

    const problems: string[] = [];
    let refusedCount = 0;
    for (const state of STATES) {
      const key = effects.get(state)!;
      for (const move of MOVES) {
        for (const actor of parties(runtime)) {
          if (allowed(state, move, actor)) continue;
          const id = `${state} -> ${move} by ${partyName(actor)}`;
          const before = await snapshot(t.db);
          const refusedBefore = await t.db.auditEntry.count({ where: { chain: `refused:effect:${key}` } });
          const error = await attempt(actor, key, move).then(
            () => null,
            (e: unknown) => e,
          );
          if (!(error instanceof LedgerError)) {
            problems.push(`${id}: ${error === null ? 'was allowed' : `threw ${String(error)}`}`);
            continue;
          }
          if (!['forbidden', 'invalid_transition', 'conflict'].includes(error.code))
            problems.push(`${id}: code ${error.code} (${error.message})`);
          if (error.message.length < 10) problems.push(`${id}: unclear message "${error.message}"`);
          const after = await snapshot(t.db);
          if (JSON.stringify(after) !== JSON.stringify(before)) problems.push(`${id}: the database changed`);
          const refused = await t.db.auditEntry.findMany({
            where: { chain: `refused:effect:${key}`, seq: { gt: refusedBefore } },
          });
          if (refused.length !== 1) problems.push(`${id}: ${refused.length} refused audit entries`);
          else if (
            refused[0]!.outcome !== 'refused' ||
            refused[0]!.actorId !== actor.id ||
            refused[0]!.requestId !== 'req-s7'
          ) {
            problems.push(`${id}: refused entry ${JSON.stringify(refused[0])}`);
          }
          refusedCount++;
        }
      }
    }
    expect(problems).toEqual([]);
    // 7 states x 7 moves x 9 parties, minus what the table allows.
    expect(refusedCount).toBeGreaterThan(400);
  }, 120_000);

  it('S7: the database guard refuses every state pair outside the table, even for the owner', async () => {
    const states: EffectState[] = ['pending', 'done', 'failed', 'unknown', 'revoked', 'stuck'];
    const pairs = new Set([
      'failed>pending',
      'pending>done',
      'pending>failed',
      'pending>stuck',
      'pending>unknown',
      'pending>revoked',
      'unknown>done',
      'unknown>pending',
      'unknown>revoked',
      'done>revoked',
      'failed>revoked',
      'stuck>revoked',
    ]);
    const keys = new Map<EffectState, string>();
    for (const state of states) keys.set(state, (await makeEffect(t.db, state)).key);
    const before = await snapshot(t.db);
    const problems: string[] = [];
    for (const from of states) {
      for (const to of states) {
        if (from === to || pairs.has(`${from}>${to}`)) continue;
        const error = await t
          .owner(`UPDATE effect SET state = $2::"EffectState", receipt = coalesce(receipt, 'r') WHERE key = $1`, [
            keys.get(from),
            to,
          ])
          .then(
            () => null,
            (e: { code?: string }) => e,
          );
        if (!error || error.code !== 'EL002') problems.push(`${from} -> ${to}: ${error ? error.code : 'accepted'}`);
      }
    }
    expect(problems).toEqual([]);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('S7: an epoch acted on that is not the current one is refused (stale epoch), nothing changes', async () => {
    const e = await makeEffect(t.db, 'done');
    await bumpEpoch({ db: t.db, actor: userActor('operator') }, { key: e.key, reason: 'resend after fix' });
    const before = await snapshot(t.db);
    // Epoch 1 is done: completing it again, or failing it, is refused.
    const error = await transitionEffect(
      { db: t.db, actor: e.runtime },
      { key: e.key, epoch: 1, to: 'failed', action: 'effect.fail', evidence: { x: 1 } },
    ).catch((x: unknown) => x);
    expect(error).toMatchObject({ code: 'invalid_transition' });
    const stale = await bumpEpoch(
      { db: t.db, actor: userActor('operator') },
      { key: e.key, expectedEpoch: 1, reason: 'again' },
    ).catch((x: unknown) => x);
    expect(stale).toMatchObject({ code: 'conflict' });
    expect((stale as Error).message).toMatch(/stale epoch/);
    expect(await snapshot(t.db)).toEqual(before);
  });
});
