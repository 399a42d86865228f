// One effect as its runtime sees it (GET /api/v1/effects/{key}): the key's identity, the current
// epoch's state with who changed it and when, the receipt, and the raw response its latest attempt
// stored (R1), so a framework boundary can hand a repeated call the result it already produced.
// Scope (Z6) is checked by the caller, as for every effect command, and a refusal audited there: a
// read model writes nothing. A key that does not exist is not_found.
import { z } from 'zod';
import type { EffectState } from '@/lib/db/generated/enums.ts';
import { effectKeyField } from '@/lib/ledger/fields.ts';
import { notFound } from '@/lib/core/errors.ts';
import { parseInput } from '@/lib/ledger/validate.ts';
import type { CommandContext } from '@/lib/ledger/commands/common.ts';

export const readEffectInput = z.strictObject({ key: effectKeyField });

export interface EffectView {
  key: string;
  runId: string;
  tool: string;
  action: string;
  recordId: string;
  target: string;
  targetType: string;
  epoch: number;
  state: EffectState;
  changedBy: string;
  changedAt: Date;
  receipt: string | null;
  leaseExpiresAt: Date | null;
  leaseExpired: boolean;
  awaitingClaim: boolean;
  /** The latest attempt's raw provider response of this epoch, or null when none was stored. */
  response: { status: number; headers: [string, string][]; bodyBase64: string } | null;
}

interface Row {
  key: string;
  run_id: string;
  tool: string;
  action: string;
  record_id: string;
  target: string;
  target_type: string;
  epoch: number;
  state: EffectState;
  changed_by: string;
  changed_at: Date;
  receipt: string | null;
  lease_expires_at: Date | null;
  lease_expired: boolean;
  awaiting_claim: boolean;
  response_status: number | null;
  response_headers: [string, string][] | null;
  response_body: Uint8Array | null;
}

export async function readEffect(ctx: CommandContext, raw: unknown): Promise<EffectView> {
  const { key } = parseInput(readEffectInput, raw);
  const [row] = await ctx.db.$queryRaw<Row[]>`
    SELECT k.key, k.run_id::text AS run_id, k.tool, k.action, k.record_id, k.target, k.target_type::text AS target_type,
           e.epoch, e.state, e.changed_by, e.changed_at, e.receipt, e.lease_expires_at, e.awaiting_claim,
           (e.lease_expires_at IS NOT NULL AND e.lease_expires_at < now()) AS lease_expired,
           a.response_status, a.response_headers, a.response_body
      FROM effect_key k
      JOIN effect e ON e.key = k.key AND e.epoch = k.current_epoch
      LEFT JOIN LATERAL (
        SELECT response_status, response_headers, response_body FROM attempt
         WHERE attempt.key = e.key AND attempt.epoch = e.epoch AND response_status IS NOT NULL
         -- The response stored last: started_at is a claim's transaction start, which a claim that
         -- waited can have earlier than a claim before it.
         ORDER BY responded_at DESC NULLS LAST, started_at DESC LIMIT 1) a ON true
     WHERE k.key = ${key}`;
  if (!row) throw notFound(`no effect with key ${JSON.stringify(key)}`, { key });
  return {
    key: row.key,
    runId: row.run_id,
    tool: row.tool,
    action: row.action,
    recordId: row.record_id,
    target: row.target,
    targetType: row.target_type,
    epoch: row.epoch,
    state: row.state,
    changedBy: row.changed_by,
    changedAt: row.changed_at,
    receipt: row.receipt,
    leaseExpiresAt: row.lease_expires_at,
    leaseExpired: row.lease_expired,
    awaitingClaim: row.awaiting_claim,
    response:
      row.response_status === null
        ? null
        : {
            status: row.response_status,
            headers: row.response_headers ?? [],
            bodyBase64: Buffer.from(row.response_body ?? new Uint8Array()).toString('base64'),
          },
  };
}
