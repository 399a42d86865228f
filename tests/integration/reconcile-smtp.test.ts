import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimEffect, failEffect, recordResponse } from '@/lib/ledger/index.ts';
import { reconcileOnce } from '@/lib/replay/index.ts';
import type { ProviderRegistry } from '@/lib/providers/registry.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { snapshot } from '../helpers/factories.ts';
import { startTestSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.ts';
import { makeCampaign, smtpRegistry, type Campaign } from './replay-fixtures.ts';

let t: TestDatabase;
let smtp: TestSmtpServer;
let providers: ProviderRegistry;
let noLookup: ProviderRegistry;

beforeAll(async () => {
  t = await createTestDatabase();
  smtp = await startTestSmtpServer();
  providers = smtpRegistry(smtp);
  noLookup = smtpRegistry(smtp, { lookup: false });
});
afterAll(async () => {
  await providers?.close();
  await noLookup?.close();
  await smtp?.close();
});

async function claim(c: Campaign, i: number) {
  const x = c.targets[i]!;
  const cl = await claimEffect(
    { db: t.db, actor: c.runtime },
    { runId: c.runId, tool: c.tool, action: 'campaign_welcome', recordId: x.recordId, target: x.target },
  );
  if (!cl.claimed) throw new Error('claim lost');
  return cl;
}
const expireLease = (key: string) =>
  t.owner(`UPDATE effect SET lease_expires_at = now() - interval '1 second' WHERE key = $1`, [key]);
const ageAttempt = (key: string) =>
  t.owner(`UPDATE attempt SET started_at = now() - interval '10 minutes' WHERE key = $1`, [key]);
const stateOf = async (key: string) =>
  (
    await t.owner<{ state: string; receipt: string | null }>(
      `SELECT state::text AS state, receipt FROM effect WHERE key = $1`,
      [key],
    )
  ).rows[0]!;
const lastTransition = async (key: string) =>
  (
    await t.owner<{ actor_kind: string; to_state: string; evidence: Record<string, unknown> }>(
      `SELECT actor_kind::text, to_state::text, evidence FROM effect_transition WHERE key = $1 ORDER BY id DESC LIMIT 1`,
      [key],
    )
  ).rows[0]!;

describe('reconciliation (C1-C3)', () => {
  it('C1: a pending key past its lease whose message the provider has is done with the real receipt (response recorded, or the process died before recording it)', async () => {
    const c = await makeCampaign(t.db, { not_sent: 3 });
    const provider = providers.get('smtp');
    // Died after the send, before recording anything: the Message-ID derived from the key is the receipt.
    const a = await claim(c, 0);
    await provider.send({
      key: a.key,
      epoch: a.epoch,
      idempotencyKey: a.idempotencyKey,
      target: a.target,
      payload: { subject: 's', text: 't' },
    });
    // Died after recording the raw response (R1), before done.
    const b = await claim(c, 1);
    const raw = await provider.send({
      key: b.key,
      epoch: b.epoch,
      idempotencyKey: b.idempotencyKey,
      target: b.target,
      payload: { subject: 's', text: 't' },
    });
    await recordResponse(
      { db: t.db, actor: c.runtime },
      { attemptId: b.attemptId, status: raw.status, headers: raw.headers, body: raw.body },
    );
    // Lease not expired: not looked at.
    const fresh = await claim(c, 2);
    await expireLease(a.key);
    await expireLease(b.key);
    const r = await reconcileOnce({ db: t.db, providers });
    expect(r).toMatchObject({ examined: 2, done: 2, unknown: 0, errors: 0 });
    for (const [cl, target] of [
      [a, c.targets[0]!.target],
      [b, c.targets[1]!.target],
    ] as const) {
      const s = await stateOf(cl.key);
      const msg = smtp.messages.find((m) => m.to[0] === target)!;
      expect(s).toEqual({ state: 'done', receipt: `${msg.messageId} queue=${msg.queueId}` });
      expect(await lastTransition(cl.key)).toMatchObject({ actor_kind: 'reconciler', to_state: 'done' });
    }
    expect((await stateOf(fresh.key)).state).toBe('pending');
  });

  it('C2: a miss inside the settle window changes nothing; after it the miss is recorded as evidence and the key becomes unknown (never revoked, S5)', async () => {
    const c = await makeCampaign(t.db, { not_sent: 1 }, { settleWindowSeconds: 120 });
    const a = await claim(c, 0); // claimed, then the process died before sending
    await expireLease(a.key);
    const before = await snapshot(t.db);
    const r1 = await reconcileOnce({ db: t.db, providers });
    expect(r1).toMatchObject({ examined: 1, waiting: 1, done: 0, unknown: 0 });
    expect(await snapshot(t.db)).toEqual(before);
    await ageAttempt(a.key);
    const r2 = await reconcileOnce({ db: t.db, providers });
    expect(r2).toMatchObject({ examined: 1, unknown: 1 });
    expect((await stateOf(a.key)).state).toBe('unknown');
    const tr = await lastTransition(a.key);
    expect(tr).toMatchObject({ actor_kind: 'reconciler', to_state: 'unknown' });
    expect(tr.evidence).toMatchObject({
      reconciler: 'lookup miss after the settle window',
      settleWindowSeconds: 120,
      lookup: { status: 404 },
    });
  });

  it('C3: a provider error during reconciliation changes nothing; the next pass decides', async () => {
    const c = await makeCampaign(t.db, { not_sent: 1 });
    const a = await claim(c, 0);
    await providers.get('smtp').send({
      key: a.key,
      epoch: a.epoch,
      idempotencyKey: a.idempotencyKey,
      target: a.target,
      payload: { subject: 's', text: 't' },
    });
    await expireLease(a.key);
    await ageAttempt(a.key); // even past the settle window, an error is no miss
    smtp.lookupFails = true;
    const before = await snapshot(t.db);
    try {
      const r = await reconcileOnce({ db: t.db, providers });
      expect(r).toMatchObject({ examined: 1, errors: 1, done: 0, unknown: 0 });
    } finally {
      smtp.lookupFails = false;
    }
    expect(await snapshot(t.db)).toEqual(before);
    expect(await reconcileOnce({ db: t.db, providers })).toMatchObject({ done: 1 });
  });

  it('C1: a key claimed again while the reconciler looked it up stays with its new claim: the pass acts only on the claim it examined', async () => {
    const c = await makeCampaign(t.db, { not_sent: 1 });
    const a = await claim(c, 0);
    await expireLease(a.key);
    await ageAttempt(a.key);
    const provider = providers.get('smtp');
    const lookup = provider.lookup!.bind(provider);
    let again: string | null = null;
    provider.lookup = async (receipt, signal) => {
      // Meanwhile the first claim's runtime reports a refusal, and the key is claimed again.
      await failEffect(
        { db: t.db, actor: c.runtime },
        { key: a.key, epoch: a.epoch, evidence: { error: 'late' }, attemptId: a.attemptId },
      );
      again = (await claim(c, 0)).attemptId;
      return lookup(receipt, signal);
    };
    try {
      expect(await reconcileOnce({ db: t.db, providers })).toMatchObject({ examined: 1, unknown: 0, done: 0 });
    } finally {
      provider.lookup = lookup;
    }
    expect(again).not.toBeNull();
    expect(await stateOf(a.key)).toMatchObject({ state: 'pending' });
  });

  it('C2: without a receipt lookup the reconciler cannot confirm: after the settle window the key becomes unknown and says why', async () => {
    const c = await makeCampaign(t.db, { not_sent: 1 }, { settleWindowSeconds: 120 });
    const a = await claim(c, 0);
    await noLookup.get('smtp').send({
      key: a.key,
      epoch: a.epoch,
      idempotencyKey: a.idempotencyKey,
      target: a.target,
      payload: { subject: 's', text: 't' },
    });
    await expireLease(a.key);
    expect(await reconcileOnce({ db: t.db, providers: noLookup })).toMatchObject({ waiting: 1 });
    await ageAttempt(a.key);
    expect(await reconcileOnce({ db: t.db, providers: noLookup })).toMatchObject({ unknown: 1 });
    expect((await lastTransition(a.key)).evidence).toMatchObject({ lookup: 'provider smtp offers no receipt lookup' });
  });
});
