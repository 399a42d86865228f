// The reconciler's queue (C1-C3, S4): a key whose provider the worker does not have reaches support,
// keys that keep failing do not hold up the ones behind them, a pass is bounded in time, and an
// interrupted replay item takes only its own epoch's verdict. Each test has its own database, so
// the keys one leaves pending never enter another's passes.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { bumpEpoch, claimEffect, revokeEffect } from '@/lib/ledger/index.ts';
import { ProviderRegistry, type RegisteredProvider } from '@/lib/providers/registry.ts';
import { reconcileOnce } from '@/lib/replay/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { userActor } from '../helpers/factories.ts';
import { makeCampaign, type Campaign } from './replay-fixtures.ts';

const raw = (status: number) => ({ status, headers: [] as [string, string][], body: new Uint8Array() });

/** A provider whose receipt is known from the idempotency key and whose lookup finds every receipt,
 *  except those in `failing` (the lookup throws: a provider error, C3). */
function fakeProvider(name: string, onLookup: (receipt: string) => void = () => undefined) {
  const failing = new Set<string>();
  const provider: RegisteredProvider = {
    name,
    supportsIdempotencyKey: true,
    supportsReceiptLookup: true,
    send: () => Promise.reject(new Error('not used here')),
    classify: () => ({ outcome: 'unknown', evidence: {} }),
    receiptHint: (idempotencyKey) => `r:${idempotencyKey}`,
    async lookup(receipt) {
      onLookup(receipt);
      if (failing.has(receipt)) throw new Error('provider unreachable');
      return { found: true, receipt, state: 'delivered', raw: raw(200) };
    },
  };
  return { provider, failing };
}

async function setup(seed: number, provider: string) {
  const t = await createTestDatabase({ poolSize: 8 });
  const c = await makeCampaign(t.db, { not_sent: seed }, { provider, settleWindowSeconds: 60 });
  const claims = [];
  for (let i = 0; i < seed; i++) claims.push(await claim(t, c, i));
  return { t, c, claims };
}

async function claim(t: TestDatabase, c: Campaign, i: number) {
  const x = c.targets[i]!;
  const cl = await claimEffect(
    { db: t.db, actor: c.runtime },
    { runId: c.runId, tool: c.tool, action: 'campaign_welcome', recordId: x.recordId, target: x.target },
  );
  if (!cl.claimed) throw new Error('claim lost');
  return cl;
}

/** The lease ran out `ago` seconds back: a larger `ago` is earlier in the reconciler's lease order. */
const expireLease = (t: TestDatabase, key: string, ago = 1) =>
  t.owner(`UPDATE effect SET lease_expires_at = now() - make_interval(secs => $2) WHERE key = $1`, [key, ago]);
const ageAttempt = (t: TestDatabase, key: string) =>
  t.owner(`UPDATE attempt SET started_at = now() - interval '10 minutes' WHERE key = $1`, [key]);
const stateOf = async (t: TestDatabase, key: string) =>
  (await t.owner<{ state: string }>(`SELECT state::text AS state FROM effect_key WHERE key = $1`, [key])).rows[0]!
    .state;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the reconciler queue', () => {
  it('S4 C2: a key whose provider this worker does not have waits out the settle window, then becomes unknown saying so', async () => {
    const { t, claims } = await setup(1, 'absent');
    const providers = new ProviderRegistry({}); // the worker knows no provider named "absent"
    const [a] = claims;
    await expireLease(t, a!.key);
    expect(await reconcileOnce({ db: t.db, providers })).toMatchObject({ examined: 1, waiting: 1, errors: 0 });
    expect(await stateOf(t, a!.key)).toBe('pending');
    await ageAttempt(t, a!.key);
    expect(await reconcileOnce({ db: t.db, providers })).toMatchObject({ examined: 1, unknown: 1, errors: 0 });
    expect(await stateOf(t, a!.key)).toBe('unknown');
    const [tr] = (
      await t.owner<{ actor_kind: string; evidence: Record<string, unknown> }>(
        `SELECT actor_kind::text, evidence FROM effect_transition WHERE key = $1 ORDER BY id DESC LIMIT 1`,
        [a!.key],
      )
    ).rows;
    expect(tr).toMatchObject({
      actor_kind: 'reconciler',
      evidence: { reconciler: 'lease expired', lookup: 'provider absent is not configured in this worker' },
    });
  });

  it('C3: keys whose lookup keeps failing go to the back of the queue: a key behind them is reconciled within two passes', async () => {
    const { provider, failing } = fakeProvider('flaky');
    const { t, claims } = await setup(6, 'flaky');
    const providers = new ProviderRegistry({}, {}, { flaky: provider });
    // Five keys whose lookup fails, all with older leases than the sixth, whose lookup works.
    for (const [i, cl] of claims.entries()) {
      await expireLease(t, cl.key, 100 - i);
      if (i < 5) failing.add(`r:${cl.idempotencyKey}`);
    }
    const good = claims[5]!;
    const first = await reconcileOnce({ db: t.db, providers, limit: 3 });
    expect(first).toMatchObject({ examined: 3, errors: 3 });
    const second = await reconcileOnce({ db: t.db, providers, limit: 3 });
    expect(second).toMatchObject({ examined: 3, errors: 2, done: 1 });
    expect(await stateOf(t, good.key)).toBe('done');
    // The failing keys are left exactly as they were (C3); with room to spare a pass asks again.
    for (const cl of claims.slice(0, 5)) expect(await stateOf(t, cl.key)).toBe('pending');
    failing.clear();
    expect(await reconcileOnce({ db: t.db, providers })).toMatchObject({ examined: 5, done: 5 });
  });

  it('C1: a pass stops starting lookups once its time is up; the next pass goes on with the keys left', async () => {
    // Each lookup takes 25 s of the pass's clock (Date.now moved forward, no real waiting).
    let clock = 0;
    const { provider } = fakeProvider('slow', () => {
      clock += 25_000;
    });
    const { t, claims } = await setup(4, 'slow');
    const providers = new ProviderRegistry({}, {}, { slow: provider });
    for (const cl of claims) await expireLease(t, cl.key);
    clock = Date.now();
    vi.spyOn(Date, 'now').mockImplementation(() => clock);
    // 60 s budget: lookups start at 0, 25 and 50 s; the fourth would start at 75 s.
    expect(await reconcileOnce({ db: t.db, providers })).toMatchObject({ examined: 3, done: 3 });
    expect(await reconcileOnce({ db: t.db, providers })).toMatchObject({ examined: 1, done: 1 });
    for (const cl of claims) expect(await stateOf(t, cl.key)).toBe('done');
  });

  it("C1: an interrupted replay item takes only its own epoch's verdict, never a later epoch's receipt", async () => {
    const { provider } = fakeProvider('found');
    const { t, c, claims } = await setup(1, 'found');
    const providers = new ProviderRegistry({}, {}, { found: provider });
    const first = claims[0]!;
    // A replay claimed epoch 1 and its handler died; an operator revoked the key and bumped it, and
    // epoch 2 was claimed and its process died too. Both replays' items are interrupted.
    const operator = { db: t.db, actor: userActor('operator') };
    await revokeEffect(operator, { key: first.key, reason: 'stop that send' });
    await bumpEpoch(operator, { key: first.key, reason: 'send it again' });
    const second = await claim(t, c, 0);
    expect(second.epoch).toBe(2);
    const item = async (epoch: number) => {
      const { rows } = await t.owner<{ id: string }>(
        `WITH r AS (INSERT INTO replay (id, run_id, status, requested_by_id, reason, set_hash, total, unknown)
                    VALUES (gen_random_uuid(), $1, 'running', gen_random_uuid(), 'test', 'h', 1, 1) RETURNING id)
         INSERT INTO replay_item (replay_id, key, epoch, target, outcome, note)
         SELECT r.id, $2, $3, $4, 'interrupted', 'claimed, no outcome' FROM r RETURNING id::text`,
        [c.runId, first.key, epoch, c.targets[0]!.target],
      );
      return rows[0]!.id;
    };
    const old = await item(1);
    const current = await item(2);
    await expireLease(t, second.key);
    expect(await reconcileOnce({ db: t.db, providers })).toMatchObject({ examined: 1, done: 1 });
    const outcomes = await t.owner<{ id: string; outcome: string }>(
      `SELECT id::text, outcome FROM replay_item WHERE id = ANY($1::bigint[]) ORDER BY id`,
      [[old, current]],
    );
    expect(outcomes.rows).toEqual([
      { id: old, outcome: 'interrupted' },
      { id: current, outcome: 'sent' },
    ]);
  });
});
