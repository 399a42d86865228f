// Reconciliation (C1-C3), on start-up and periodically: pending keys whose lease expired are looked up
// at the provider by receipt (a read-only query per key).
//   found                           -> done with that receipt (S2)
//   miss inside the settle window   -> nothing (no evidence yet, C2)
//   miss after it                   -> the miss is recorded as evidence and the key becomes unknown
//   provider error                  -> nothing changes (C3)
// The receipt comes from the raw response stored with the attempt (R1), or, when the process died
// before recording it, from the provider's receipt hint (SMTP: the Message-ID derived from the
// idempotency key), or the message is looked up by its idempotency key where the provider offers
// that (the sandbox). A provider with no lookup at all cannot confirm anything: after the settle
// window the key becomes unknown with that stated as evidence, for support; so does a key whose
// provider this worker does not have. A pass is bounded in time, and keys whose lookup failed lately
// go to the back of the queue (reconcile-backoff.ts), so failing keys never hold up the others.
import { Prisma, type Db } from '../db/client.ts';
import { completeEffect, getTool, LedgerError, markUnknown, type Actor } from '../ledger/index.ts';
import type { ProviderRegistry, RegisteredProvider } from '../providers/registry.ts';
import { setOutcome } from './item-outcome.ts';
import { backoffFor } from './reconcile-backoff.ts';

export const reconcilerActor: Actor = { kind: 'reconciler', id: 'reconciler', label: 'reconciler' };

export interface ReconcileResult {
  examined: number;
  done: number;
  unknown: number;
  /** Misses inside the settle window: left alone (C2). */
  waiting: number;
  /** Provider errors: nothing changed (C3). */
  errors: number;
}

interface Row {
  key: string;
  epoch: number;
  tool: string;
  idempotency_key: string;
  lease_expires_at: Date;
  sent_at: Date | null;
  status: number | null;
  headers: [string, string][] | null;
  body: Uint8Array | null;
  attempt_id: string | null;
  now: Date;
}

/** How long one pass may keep starting lookups: the worker runs its other leader tasks after the
 *  pass, and a provider that times out on every lookup (10 s each) must not hold them for long. */
const PASS_BUDGET_MS = 60_000;
const LOOKUP_TIMEOUT_MS = 10_000;

export async function reconcileOnce(deps: {
  db: Db;
  providers: ProviderRegistry;
  limit?: number;
  /** Default 60 s; keys not reached in time wait for the next pass, unexamined. */
  budgetMs?: number;
  log?: (l: string) => void;
}): Promise<ReconcileResult> {
  const { db, providers } = deps;
  const result: ReconcileResult = { examined: 0, done: 0, unknown: 0, waiting: 0, errors: 0 };
  const limit = deps.limit ?? 500;
  const deadline = Date.now() + (deps.budgetMs ?? PASS_BUDGET_MS);
  const backoff = backoffFor(providers);
  // Keys that failed lately go last (reconcile-backoff.ts): the others first, in lease order ...
  const waiting = backoff.waiting();
  const rows = await expiredKeys(db, Prisma.sql`AND NOT (e.key = ANY(${waiting}::text[]))`, limit);
  // ... then, with room left, the failed ones whose wait ends soonest.
  if (rows.length < limit && waiting.length > 0) {
    const again = await expiredKeys(db, Prisma.sql`AND e.key = ANY(${waiting}::text[])`, limit - rows.length);
    const order = new Map(waiting.map((key, i) => [key, i]));
    rows.push(...again.sort((a, b) => order.get(a.key)! - order.get(b.key)!));
  }
  for (const row of rows) {
    if (Date.now() >= deadline) break; // the rest is looked at by the next pass
    result.examined++;
    const before = result.errors;
    try {
      await reconcileKey(db, providers, row, result);
    } catch (error) {
      // Another actor moved the key meanwhile (its decision stands), or the database hiccuped.
      if (!(error instanceof LedgerError)) deps.log?.(`reconcile ${row.key}: ${(error as Error).message}`);
      result.errors++;
    }
    if (result.errors > before) backoff.failed(row.key);
    else backoff.settled(row.key);
  }
  return result;
}

/** Pending keys not awaiting a claim whose lease expired, oldest lease first, at their current epoch. */
function expiredKeys(db: Db, filter: Prisma.Sql, limit: number): Promise<Row[]> {
  return db.$queryRaw<Row[]>`
    SELECT e.key, e.epoch, k.tool, e.idempotency_key, e.lease_expires_at,
           a.started_at AS sent_at, a.response_status AS status, a.response_headers AS headers, a.response_body AS body, a.id AS attempt_id,
           now() AS now
      FROM effect e
      JOIN effect_key k ON k.key = e.key AND k.current_epoch = e.epoch
      -- The attempt of the claim that holds the key: the newest claim transition (its id follows the
      -- order the claims took the key; ledger_transition judges reports by the same rule).
      LEFT JOIN LATERAL (
        SELECT a.* FROM effect_transition t JOIN attempt a ON a.id = t.attempt_id
         WHERE t.key = e.key AND t.epoch = e.epoch AND t.to_state = 'pending' AND t.attempt_id IS NOT NULL
         ORDER BY t.id DESC LIMIT 1) a ON true
     WHERE e.state = 'pending' AND NOT e.awaiting_claim AND e.lease_expires_at < now() ${filter}
     ORDER BY e.lease_expires_at
     LIMIT ${limit}`;
}

/** The tool's provider in this worker, or why there is none (not configured, or not buildable here). */
function providerOf(providers: ProviderRegistry, name: string): RegisteredProvider | string {
  if (!providers.has(name)) return `provider ${name} is not configured in this worker`;
  try {
    return providers.get(name);
  } catch (error) {
    return `provider ${name} cannot be used in this worker: ${(error as Error).message}`;
  }
}

async function reconcileKey(db: Db, providers: ProviderRegistry, row: Row, result: ReconcileResult): Promise<void> {
  const tool = await getTool(db, row.tool);
  // A provider this worker does not have is like one without a lookup (S4): nothing can confirm the
  // send here, so after the settle window the key goes to support with that as evidence, instead of
  // counting as an error on every pass and never reaching anyone.
  const available = providerOf(providers, tool.provider);
  const provider = typeof available === 'string' ? null : available;
  const settle = providers.settings(tool.provider).settleWindowSeconds ?? tool.settleWindowSeconds;
  const since = row.sent_at ?? row.lease_expires_at;
  const settled = row.now.getTime() >= since.getTime() + settle * 1000;
  const ref = { db, actor: reconcilerActor };

  let receipt: string | null = null;
  if (provider && row.status !== null && row.body) {
    const verdict = provider.classify({
      status: row.status,
      headers: row.headers ?? [],
      body: new Uint8Array(row.body),
    });
    if (verdict.outcome === 'done') receipt = verdict.receipt;
  }
  receipt ??= provider?.receiptHint?.(row.idempotency_key) ?? null;
  // Without a receipt to look up, a provider that finds messages by their idempotency key is asked
  // that way (the process died before it stored the answer).
  const byKey = !(receipt && provider?.supportsReceiptLookup) && provider?.lookupByIdempotencyKey;
  const look = byKey
    ? (signal: AbortSignal) => byKey.call(provider, row.idempotency_key, signal)
    : provider && receipt && provider.supportsReceiptLookup
      ? (signal: AbortSignal) => provider.lookup(receipt, signal)
      : null;

  if (!provider || !look) {
    if (!settled) {
      result.waiting++;
      return;
    }
    await markUnknown(ref, {
      key: row.key,
      epoch: row.epoch,
      attemptId: row.attempt_id ?? undefined,
      evidence: {
        reconciler: 'lease expired',
        receipt,
        lookup: !provider
          ? (available as string)
          : provider.supportsReceiptLookup
            ? 'no receipt to look up'
            : `provider ${provider.name} offers no receipt lookup`,
        sentAt: since.toISOString(),
      },
    });
    result.unknown++;
    await settleInterrupted(db, row, 'unknown', 'lease expired with no receipt lookup: unknown, for support');
    return;
  }

  let found;
  try {
    found = await look(AbortSignal.timeout(LOOKUP_TIMEOUT_MS));
  } catch {
    result.errors++; // C3: a provider error changes nothing
    return;
  }
  // S2: only a message the provider says it delivered or accepted completes the key.
  if (found.found && (found.state === 'delivered' || found.state === 'accepted')) {
    await completeEffect(ref, {
      key: row.key,
      epoch: row.epoch,
      attemptId: row.attempt_id ?? undefined,
      receipt: found.receipt,
      evidence: {
        reconciler: byKey ? 'message found by its idempotency key' : 'receipt found',
        state: found.state,
        lookupStatus: found.raw.status,
      },
    });
    result.done++;
    await settleInterrupted(db, row, 'sent', `receipt ${found.receipt} found by the reconciler`);
    return;
  }
  if (!settled) {
    result.waiting++; // C2: a miss inside the settle window is no evidence
    return;
  }
  await markUnknown(ref, {
    key: row.key,
    epoch: row.epoch,
    attemptId: row.attempt_id ?? undefined,
    evidence: {
      reconciler: found.found ? 'provider reports the message failed' : 'lookup miss after the settle window',
      receipt,
      ...(byKey ? { idempotencyKey: row.idempotency_key } : {}),
      settleWindowSeconds: settle,
      sentAt: since.toISOString(),
      lookup: {
        status: found.raw.status,
        headers: found.raw.headers,
        body: new TextDecoder().decode(found.raw.body).slice(0, 4000),
      },
    },
  });
  result.unknown++;
  await settleInterrupted(db, row, 'unknown', 'lookup miss after the settle window: unknown, for support');
}

/** A replay item left 'interrupted' by a crashed handler takes the reconciler's verdict: only an item
 *  of the epoch decided. An item of an earlier epoch (its key revoked and bumped since) claimed a
 *  send of its own, and a later epoch's receipt says nothing about it. */
async function settleInterrupted(
  db: Db,
  at: { key: string; epoch: number },
  outcome: 'sent' | 'unknown',
  note: string,
): Promise<void> {
  const items = await db.replayItem.findMany({
    where: { key: at.key, epoch: at.epoch, outcome: 'interrupted' },
    select: { id: true, replayId: true },
  });
  for (const i of items) await setOutcome(db, i.replayId, i.id, outcome, note);
}
