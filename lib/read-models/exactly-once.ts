// P4, the run's headline figure: approved targets with exactly one done effect (over all epochs)
// divided by approved targets. The runs list, the run page, the replay preview and report, and the
// agent API's run view all ask here, so the figure means the same thing everywhere.
import { Prisma, type DbOrTx } from '@/lib/db/client.ts';

export interface ExactlyOnce {
  numerator: number;
  denominator: number;
  ratio: number;
}

// Plan items joined with their done effects, grouped per key: a hash join over the plan, which the
// console bench measured faster than a lookup per item on plans of a million targets.
async function countExactlyOnce(db: DbOrTx, planItems: Prisma.Sql): Promise<number> {
  const [row] = await db.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM (
      SELECT pi.key FROM plan_item pi JOIN effect e ON e.key = pi.key AND e.state = 'done'
       WHERE ${planItems} GROUP BY pi.key HAVING count(*) = 1) x`;
  return Number(row?.n ?? 0);
}

const figure = (numerator: number, denominator: number): ExactlyOnce => ({
  numerator,
  denominator,
  ratio: denominator ? numerator / denominator : 0,
});

/** P4 of one approved plan whose item count the caller already has. */
export async function exactlyOnceOfPlan(db: DbOrTx, planId: string, items: number): Promise<ExactlyOnce> {
  return figure(await countExactlyOnce(db, Prisma.sql`pi.plan_id = ${planId}::uuid`), items);
}

/** P4 of a run: the targets of its approved plan. */
export async function exactlyOnceOfRun(db: DbOrTx, runId: string): Promise<ExactlyOnce> {
  const approved = Prisma.sql`pi.plan_id IN (SELECT id FROM plan WHERE run_id = ${runId}::uuid AND status = 'approved')`;
  const [[row], numerator] = await Promise.all([
    db.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM plan_item pi WHERE ${approved}`,
    countExactlyOnce(db, approved),
  ]);
  return figure(numerator, Number(row?.n ?? 0));
}
