// Reconciliation (C1-C3), on start-up and periodically: pending keys whose lease expired are looked up
// at the provider by receipt (a read-only query per key).
//   found                           -> done with that receipt (S2)
//   miss inside the settle window   -> nothing (no evidence yet, C2)
//   miss after it                   -> the miss is recorded as evidence and the key becomes unknown
//   provider error                  -> nothing changes (C3)
// The receipt comes from the raw response stored with the attempt (R1), or, when the process died
// before recording it, from the provider's receipt hint (SMTP: the Message-ID derived from the
// idempotency key). A provider with no lookup at all cannot confirm anything: after the settle
// window the key becomes unknown with that stated as evidence, for support.
import type { Db } from '../db/client.ts';
import { completeEffect, getTool, LedgerError, markUnknown, type Actor } from '../ledger/index.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import { setOutcome } from './item-outcome.ts';

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

export async function reconcileOnce(deps: {
  db: Db;
  providers: ProviderRegistry;
  limit?: number;
  log?: (l: string) => void;
}): Promise<ReconcileResult> {
  const { db, providers } = deps;
  const result: ReconcileResult = { examined: 0, done: 0, unknown: 0, waiting: 0, errors: 0 };
  const rows = await db.$queryRaw<Row[]>`
    SELECT e.key, e.epoch, k.tool, e.idempotency_key, e.lease_expires_at,
           a.started_at AS sent_at, a.response_status AS status, a.response_headers AS headers, a.response_body AS body, a.id AS attempt_id,
           now() AS now
      FROM effect e
      JOIN effect_key k ON k.key = e.key AND k.current_epoch = e.epoch
      LEFT JOIN LATERAL (SELECT * FROM attempt a WHERE a.key = e.key AND a.epoch = e.epoch ORDER BY a.started_at DESC LIMIT 1) a ON true
     WHERE e.state = 'pending' AND NOT e.awaiting_claim AND e.lease_expires_at < now()
     ORDER BY e.lease_expires_at
     LIMIT ${deps.limit ?? 500}`;
  for (const row of rows) {
    result.examined++;
    try {
      await reconcileKey(db, providers, row, result);
    } catch (error) {
      // Another actor moved the key meanwhile (its decision stands), or the database hiccuped.
      if (!(error instanceof LedgerError)) deps.log?.(`reconcile ${row.key}: ${(error as Error).message}`);
      result.errors++;
    }
  }
  return result;
}

async function reconcileKey(db: Db, providers: ProviderRegistry, row: Row, result: ReconcileResult): Promise<void> {
  const tool = await getTool(db, row.tool);
  if (!providers.has(tool.provider)) {
    result.errors++;
    return;
  }
  const provider = providers.get(tool.provider);
  const settle = providers.settings(tool.provider).settleWindowSeconds ?? tool.settleWindowSeconds;
  const since = row.sent_at ?? row.lease_expires_at;
  const settled = row.now.getTime() >= since.getTime() + settle * 1000;
  const ref = { db, actor: reconcilerActor };

  let receipt: string | null = null;
  if (row.status !== null && row.body) {
    const verdict = provider.classify({
      status: row.status,
      headers: row.headers ?? [],
      body: new Uint8Array(row.body),
    });
    if (verdict.outcome === 'done') receipt = verdict.receipt;
  }
  receipt ??= provider.receiptHint?.(row.idempotency_key) ?? null;

  if (!receipt || !provider.supportsReceiptLookup) {
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
        lookup: provider.supportsReceiptLookup
          ? 'no receipt to look up'
          : `provider ${provider.name} offers no receipt lookup`,
        sentAt: since.toISOString(),
      },
    });
    result.unknown++;
    await settleInterrupted(db, row.key, 'unknown', 'lease expired with no receipt lookup: unknown, for support');
    return;
  }

  let found;
  try {
    found = await provider.lookup(receipt, AbortSignal.timeout(10_000));
  } catch {
    result.errors++; // C3: a provider error changes nothing
    return;
  }
  if (found.found && found.state !== 'failed') {
    await completeEffect(ref, {
      key: row.key,
      epoch: row.epoch,
      attemptId: row.attempt_id ?? undefined,
      receipt: found.receipt,
      evidence: { reconciler: 'receipt found', state: found.state, lookupStatus: found.raw.status },
    });
    result.done++;
    await settleInterrupted(db, row.key, 'sent', `receipt ${found.receipt} found by the reconciler`);
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
  await settleInterrupted(db, row.key, 'unknown', 'lookup miss after the settle window: unknown, for support');
}

/** A replay item left 'interrupted' by a crashed handler takes the reconciler's verdict. */
async function settleInterrupted(db: Db, key: string, outcome: 'sent' | 'unknown', note: string): Promise<void> {
  const items = await db.replayItem.findMany({
    where: { key, outcome: 'interrupted' },
    select: { id: true, replayId: true },
  });
  for (const i of items) await setOutcome(db, i.replayId, i.id, outcome, note);
}
