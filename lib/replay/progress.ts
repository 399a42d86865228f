// Read models for the console (F5): live progress of one replay, the replays of a run, and the final
// report (what went out, what was skipped and why, the run's exactly-once figure before and after).
import { z } from 'zod';
import { Prisma, type DbOrTx } from '../db/client.ts';
import { notFound } from '../ledger/index.ts';
import { parseInput } from '../ledger/validate.ts';
import { exactlyOnce } from './set.ts';

export const replayProgressInput = z.strictObject({ replayId: z.uuid() });
export const listReplaysInput = z.strictObject({ runId: z.uuid() });
export const replayReportInput = z.strictObject({
  replayId: z.uuid(),
  /** sent, skipped, failed, unknown (includes interrupted), open (no outcome yet), or all. */
  outcome: z.enum(['all', 'sent', 'skipped', 'failed', 'unknown', 'open']).default('all'),
  after: z.string().regex(/^\d+$/).optional(),
  limit: z.number().int().min(1).max(1000).default(100),
});

export interface ReplayProgress {
  replayId: string;
  runId: string;
  status: string;
  reason: string;
  setHash: string;
  requestedById: string;
  approvedById: string | null;
  total: number;
  sent: number;
  skipped: number;
  failed: number;
  unknown: number;
  remaining: number;
  /** 0..1 for the progress bar. */
  fraction: number;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  approval: {
    id: string;
    status: string;
    expiresAt: Date;
    expired: boolean;
    requestedById: string;
    decidedById: string | null;
  } | null;
}

export async function getReplayProgress(ctx: { db: DbOrTx }, raw: unknown): Promise<ReplayProgress> {
  const input = parseInput(replayProgressInput, raw);
  const r = await ctx.db.replay.findUnique({ where: { id: input.replayId } });
  if (!r) throw notFound(`replay ${input.replayId} does not exist`, { field: 'replayId' });
  const approval = await ctx.db.approvalRequest.findFirst({
    where: { kind: 'replay', payload: { path: ['replayId'], equals: r.id } },
    orderBy: { requestedAt: 'desc' },
  });
  const doneCount = r.sent + r.skipped + r.failed + r.unknown;
  return {
    replayId: r.id,
    runId: r.runId,
    status: r.status,
    reason: r.reason,
    setHash: r.setHash,
    requestedById: r.requestedById,
    approvedById: r.approvedById,
    total: r.total,
    sent: r.sent,
    skipped: r.skipped,
    failed: r.failed,
    unknown: r.unknown,
    remaining: Math.max(0, r.total - doneCount),
    fraction: r.total ? Math.min(1, doneCount / r.total) : 1,
    createdAt: r.createdAt,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    approval: approval
      ? {
          id: approval.id,
          status: approval.status,
          expiresAt: approval.expiresAt,
          expired: approval.status === 'open' && approval.expiresAt <= new Date(),
          requestedById: approval.requestedById,
          decidedById: approval.decidedById,
        }
      : null,
  };
}

export async function listReplays(ctx: { db: DbOrTx }, raw: unknown): Promise<ReplayProgress[]> {
  const input = parseInput(listReplaysInput, raw);
  const rows = await ctx.db.replay.findMany({
    where: { runId: input.runId },
    orderBy: { createdAt: 'desc' },
    select: { id: true },
  });
  return Promise.all(rows.map((r) => getReplayProgress(ctx, { replayId: r.id })));
}

export interface ReplayReportItem {
  itemId: string;
  key: string;
  target: string;
  epoch: number;
  outcome: string;
  note: string | null;
  /** The key's state now (the reconciler may have decided an interrupted one since). */
  stateNow: string | null;
}

type ExactlyOnceFigure = { exactlyOnce: number; approved: number; ratio: number };

export interface ReplayReport extends ReplayProgress {
  /** The people the replay names, by email (ids stay in requestedById / approvedById). */
  requestedBy: string | null;
  approvedBy: string | null;
  exactlyOnceBefore: ExactlyOnceFigure | null;
  /** A finished replay: the run's figure at its end, as recorded then; it never changes afterwards
   *  (null for a replay cancelled before the figure was recorded). Unfinished: the figure so far. */
  exactlyOnceAfter: ExactlyOnceFigure | null;
  /** A finished replay whose run moved since it ended (a resolution, a revoke): the figure now, shown
   *  as its own "since then" line. null when unfinished or unchanged. */
  sinceThen: (ExactlyOnceFigure & { asOf: Date }) | null;
  /** Skip reasons with their counts ("changed after confirmation", "lost the claim", ...). */
  skippedBecause: { reason: string; count: number }[];
  items: ReplayReportItem[];
  nextCursor: string | null;
}

export async function getReplayReport(ctx: { db: DbOrTx }, raw: unknown): Promise<ReplayReport> {
  const input = parseInput(replayReportInput, raw);
  const progress = await getReplayProgress(ctx, { replayId: input.replayId });
  const { db } = ctx;
  // The figures recorded on the trail: before (with the request) and at the end (with the completion
  // or the cancellation), so a finished report reads the same however often it is opened.
  const entries = await db.auditEntry.findMany({
    where: {
      // On the run's chain (indexed by chain), as every replay decision is.
      chain: `run:${progress.runId}`,
      subjectType: 'replay',
      subjectId: input.replayId,
      action: { in: ['replay.request', 'replay.complete', 'replay.cancel'] },
      outcome: 'ok',
    },
    select: { action: true, detail: true },
    orderBy: { id: 'asc' },
  });
  const figure = (action: string, field: 'exactlyOnceBefore' | 'exactlyOnceAfter') =>
    (entries.find((e) => e.action === action)?.detail as Record<string, ExactlyOnceFigure | undefined> | null)?.[
      field
    ] ?? null;
  const before = figure('replay.request', 'exactlyOnceBefore');
  const finished = progress.status === 'completed' || progress.status === 'cancelled';
  const now = await exactlyOnce(db, progress.runId);
  const atEnd = finished
    ? progress.status === 'completed'
      ? figure('replay.complete', 'exactlyOnceAfter')
      : figure('replay.cancel', 'exactlyOnceAfter')
    : now;
  const moved =
    finished && atEnd !== null && (atEnd.exactlyOnce !== now.exactlyOnce || atEnd.approved !== now.approved);
  const people = await db.user.findMany({
    where: { id: { in: [progress.requestedById, progress.approvedById].filter((x): x is string => Boolean(x)) } },
    select: { id: true, email: true },
  });
  const email = (id: string | null) => (id ? (people.find((p) => p.id === id)?.email ?? null) : null);
  const skipped = await db.$queryRaw<{ reason: string; n: bigint }[]>`
    SELECT split_part(split_part(note, ':', 1), ' (', 1) AS reason, count(*) AS n FROM replay_item
     WHERE replay_id = ${input.replayId}::uuid AND outcome = 'skipped' GROUP BY 1 ORDER BY 2 DESC`;
  const filter =
    input.outcome === 'all'
      ? Prisma.empty
      : input.outcome === 'open'
        ? Prisma.sql`AND ri.outcome IS NULL`
        : input.outcome === 'unknown'
          ? Prisma.sql`AND ri.outcome IN ('unknown', 'interrupted')`
          : Prisma.sql`AND ri.outcome = ${input.outcome}`;
  const after = input.after ? Prisma.sql`AND ri.id > ${BigInt(input.after)}` : Prisma.empty;
  const rows = await db.$queryRaw<
    {
      id: bigint;
      key: string;
      target: string;
      epoch: number;
      outcome: string | null;
      note: string | null;
      state: string | null;
    }[]
  >`
    SELECT ri.id, ri.key, ri.target, ri.epoch, ri.outcome, ri.note, k.state::text AS state
      FROM replay_item ri LEFT JOIN effect_key k ON k.key = ri.key
     WHERE ri.replay_id = ${input.replayId}::uuid ${filter} ${after} ORDER BY ri.id LIMIT ${input.limit}`;
  const cancelled = progress.status === 'cancelled';
  const items = rows.map((r) => ({
    itemId: String(r.id),
    key: r.key,
    target: r.target,
    epoch: r.epoch,
    outcome: r.outcome ?? (cancelled ? 'not_sent_cancelled' : 'open'),
    note: r.outcome ? r.note : null,
    stateNow: r.state,
  }));
  return {
    ...progress,
    requestedBy: email(progress.requestedById),
    approvedBy: email(progress.approvedById),
    exactlyOnceBefore: before,
    exactlyOnceAfter: atEnd,
    sinceThen: moved ? { ...now, asOf: new Date() } : null,
    skippedBecause: skipped.map((s) => ({ reason: s.reason, count: Number(s.n) })),
    items,
    nextCursor: items.length === input.limit ? items[items.length - 1]!.itemId : null,
  };
}
