// The background verification of the audit trail (A2). Re-verifying the whole trail takes seconds at a
// million entries, so pages and /metrics never do it: the leader worker (./verification-schedule.ts)
// verifies incrementally from where the last pass stopped and stores the result in the one-row table
// audit_verification; readers show that stored result and its age.
//
// An incremental pass (audit_verify_since) checks every entry above the verified id, and again every
// entry appended since shortly before the previous pass began: ids are drawn when an entry is
// inserted, not when it commits, so an entry with a lower id can become visible after a pass that
// already saw a higher one. A full pass (audit_verify(), every entry from the first) runs on the first
// pass and then every fullEveryMs, for what an incremental pass cannot see: an entry changed after it
// was verified. While the stored result is broken every pass is a full one: an incremental pass looks
// only above the verified id and in its re-check window, so it would not see a break below them (one
// a full pass found) and would store ok over it. Only a clean full pass clears a break.
import type { Db, DbOrTx } from '../db/client.ts';
import { verifyAuditTrail } from './verify.ts';

/** How far before the previous pass's start an incremental pass re-checks (a transaction open longer
 *  than this between its audit append and its commit would be seen only by the next full pass). */
export const RECHECK_MARGIN_MS = 60_000;
export const FULL_VERIFY_EVERY_MS = 60 * 60_000;

export type StoredVerification =
  | { state: 'unverified' }
  | { state: 'ok'; upToId: string; checkedAt: Date; fullAt: Date }
  | {
      state: 'broken';
      upToId: string;
      checkedAt: Date;
      fullAt: Date;
      entryId: string | null;
      chain: string;
      seq: number;
      problem: string;
    };

export async function readAuditVerification(db: DbOrTx): Promise<StoredVerification> {
  const row = await db.auditVerification.findUnique({ where: { id: 1 } });
  if (!row) return { state: 'unverified' };
  const base = { upToId: String(row.upToId), checkedAt: row.checkedAt, fullAt: row.fullAt };
  if (row.ok) return { state: 'ok', ...base };
  return {
    state: 'broken',
    ...base,
    entryId: row.brokenEntryId === null ? null : String(row.brokenEntryId),
    chain: row.brokenChain ?? '',
    seq: row.brokenSeq ?? 0,
    problem: row.problem ?? 'unknown problem',
  };
}

/** Seconds since the stored pass began, or null when no pass has run. */
export function verificationAgeSeconds(v: StoredVerification, now = new Date()): number | null {
  return v.state === 'unverified' ? null : Math.max(0, (now.getTime() - v.checkedAt.getTime()) / 1000);
}

/** The stored verification as /metrics reports it (one primary-key read per scrape). */
export async function auditVerificationFigures(db: Db): Promise<{ ageSeconds: number | null; ok: boolean | null }> {
  const v = await readAuditVerification(db);
  return { ageSeconds: verificationAgeSeconds(v), ok: v.state === 'unverified' ? null : v.state === 'ok' };
}

export interface PassResult {
  kind: 'full' | 'incremental';
  /** Entries checked by this pass (an incremental pass counts its re-checked entries too). */
  entries: number;
  stored: StoredVerification;
}

interface Found {
  upToId: bigint | null;
  entries: number;
  broken: { entryId: bigint | null; chain: string; seq: number; problem: string } | null;
}

/** One pass: full when nothing is stored yet, the stored result is broken, or the last full pass is
 *  older than fullEveryMs, else incremental. Everything it reads is one snapshot (a repeatable-read
 *  transaction). */
export async function runAuditVerification(
  db: Db,
  options: { fullEveryMs?: number; full?: boolean; recheckMarginMs?: number } = {},
): Promise<PassResult> {
  const fullEveryMs = options.fullEveryMs ?? FULL_VERIFY_EVERY_MS;
  return db.$transaction(
    async (tx) => {
      const now = (await tx.$queryRaw<{ now: Date }[]>`SELECT now() AS now`)[0]!.now;
      const last = await tx.auditVerification.findUnique({ where: { id: 1 } });
      const full = options.full || !last || !last.ok || now.getTime() - last.fullAt.getTime() >= fullEveryMs;
      let found: Found;
      if (full) {
        const max = (await tx.$queryRaw<{ max: bigint | null }[]>`SELECT max(id) AS max FROM audit_entry`)[0]!.max;
        const v = await verifyAuditTrail(tx);
        found = v.ok
          ? { upToId: max, entries: v.entries, broken: null }
          : {
              upToId: null,
              entries: 0,
              broken: {
                entryId: v.entryId === null ? null : BigInt(v.entryId),
                chain: v.chain,
                seq: v.seq,
                problem: v.problem,
              },
            };
      } else {
        const recheckFrom = new Date(last.checkedAt.getTime() - (options.recheckMarginMs ?? RECHECK_MARGIN_MS));
        const [r] = await tx.$queryRaw<
          {
            entry_id: bigint | null;
            chain: string | null;
            seq: number | null;
            problem: string | null;
            entries: bigint;
            up_to: bigint | null;
          }[]
        >`SELECT entry_id, chain, seq, problem, entries, up_to FROM audit_verify_since(${last.upToId}, ${recheckFrom})`;
        if (!r) throw new Error('audit_verify_since() returned no row');
        found = {
          upToId: r.up_to,
          entries: Number(r.entries),
          broken:
            r.problem === null
              ? null
              : { entryId: r.entry_id, chain: r.chain ?? '', seq: r.seq ?? 0, problem: r.problem },
        };
      }
      // A clean pass moves the verified id forward (never back: a re-checked window may end lower);
      // a broken one leaves it, and the next pass, a full one, checks everything again.
      const previous = last?.upToId ?? 0n;
      const upToId =
        found.broken === null && found.upToId !== null && found.upToId > previous ? found.upToId : previous;
      const data = {
        upToId,
        checkedAt: now,
        fullAt: full ? now : last!.fullAt,
        ok: found.broken === null,
        brokenEntryId: found.broken?.entryId ?? null,
        brokenChain: found.broken?.chain ?? null,
        brokenSeq: found.broken?.seq ?? null,
        problem: found.broken?.problem ?? null,
      };
      await tx.auditVerification.upsert({ where: { id: 1 }, create: { id: 1, ...data }, update: data });
      return { kind: full ? 'full' : 'incremental', entries: found.entries, stored: await readAuditVerification(tx) };
    },
    { isolationLevel: 'RepeatableRead', timeout: 120_000, maxWait: 30_000 },
  );
}
