// F1: before anything is sent, every approved target with its state, who changed it last and when,
// counts per state, and exactly which targets will go out. Read-only; any authenticated console role
// may look. Items come in keyset pages (plan_item id), filterable by state or by "will send".
import { z } from 'zod';
import { Prisma, type DbOrTx } from '../db/client.ts';
import { notFound } from '../ledger/index.ts';
import { parseInput } from '../ledger/validate.ts';
import { remember, rememberWhileUnchanged, seedRemembered } from '../read-models/common.ts';
import { changeMark } from '../read-models/change-mark.ts';
import {
  exactlyOnce,
  skipReason,
  summarizeSet,
  targetsSql,
  VIEW_STATES,
  type SetSummary,
  type ViewState,
} from './set.ts';

export const previewReplayInput = z.strictObject({
  runId: z.uuid(),
  /** all, will_send, skipped, or one view state. */
  filter: z.enum(['all', 'will_send', 'skipped', ...VIEW_STATES]).default('all'),
  /** Keyset cursor: the last itemId of the previous page. */
  after: z.string().regex(/^\d+$/).optional(),
  limit: z.number().int().min(1).max(1000).default(100),
});
export type PreviewReplayInput = z.input<typeof previewReplayInput>;

export interface PreviewItem {
  itemId: string;
  key: string;
  tool: string;
  action: string;
  recordId: string;
  target: string;
  epoch: number;
  state: ViewState;
  changedBy: string | null;
  changedAt: Date | null;
  willSend: boolean;
  /** Why it is skipped (F2), null when it will be sent. */
  skipReason: string | null;
}

export interface ReplayPreview extends SetSummary {
  runId: string;
  /** Targets that will be sent: the number the operator types to confirm (F4). */
  willSend: number;
  fourEyes: boolean;
  exactlyOnce: { exactlyOnce: number; approved: number; ratio: number };
  items: PreviewItem[];
  nextCursor: string | null;
}

export async function previewReplay(ctx: { db: DbOrTx }, raw: unknown): Promise<ReplayPreview> {
  const input = parseInput(previewReplayInput, raw);
  const { db } = ctx;
  const run = await db.run.findUnique({ where: { id: input.runId }, select: { id: true } });
  if (!run) throw notFound(`run ${input.runId} does not exist`, { field: 'runId' });
  const { summary, fourEyes, eo } = await headline(db, input.runId);
  const filter =
    input.filter === 'all'
      ? Prisma.empty
      : input.filter === 'will_send'
        ? Prisma.sql`AND t.view_state IN ('not_sent', 'awaiting_claim', 'failed')`
        : input.filter === 'skipped'
          ? Prisma.sql`AND t.view_state NOT IN ('not_sent', 'awaiting_claim', 'failed')`
          : Prisma.sql`AND t.view_state = ${input.filter}`;
  const after = input.after ? Prisma.sql`AND t.item_id > ${BigInt(input.after)}` : Prisma.empty;
  const rows = await db.$queryRaw<
    {
      item_id: bigint;
      key: string;
      tool: string;
      action: string;
      record_id: string;
      target: string;
      epoch: number;
      view_state: ViewState;
      changed_by: string | null;
      changed_at: Date | null;
    }[]
  >`
    SELECT * FROM (${targetsSql(input.runId)}) t WHERE true ${filter} ${after} ORDER BY t.item_id LIMIT ${input.limit}`;
  const items = rows.map((r) => ({
    itemId: String(r.item_id),
    key: r.key,
    tool: r.tool,
    action: r.action,
    recordId: r.record_id,
    target: r.target,
    epoch: r.epoch,
    state: r.view_state,
    changedBy: r.changed_by,
    changedAt: r.changed_at,
    willSend: skipReason(r.view_state) === null,
    skipReason: skipReason(r.view_state),
  }));
  return {
    runId: input.runId,
    ...summary,
    willSend: summary.eligible,
    fourEyes,
    exactlyOnce: eo,
    items,
    nextCursor: items.length === input.limit ? items[items.length - 1]!.itemId : null,
  };
}

const LARGE_SET = 50_000;
const HEADLINE_MS = 10_000;
const largeSets = new Set<string>();

/** The preview's headline (counts, set hash, four-eyes, P4). Each is a pass over every target, seconds
 *  on a million-item run, so for runs over LARGE_SET targets concurrent views share one computation at
 *  most HEADLINE_MS old; a request still binds to the set as it is then (requestReplay recomputes).
 *  Smaller runs get the exact headline, shared by concurrent views and reused while nothing changed. */
async function headline(db: DbOrTx, runId: string) {
  const compute = async () => {
    const [summary, fourEyes, eo] = await Promise.all([
      summarizeSet(db, runId),
      fourEyesFor(db, runId),
      exactlyOnce(db, runId),
    ]);
    return { summary, fourEyes, eo };
  };
  const mark = () => changeMark(db);
  const value = largeSets.has(runId)
    ? (await remember(`replay-headline:${runId}`, HEADLINE_MS, compute, { mark })).value
    : await rememberWhileUnchanged(`replay-headline-exact:${runId}`, compute, mark);
  if (value.summary.total > LARGE_SET && !largeSets.has(runId)) {
    largeSets.add(runId);
    // The next view reads the large run's headline through remember(): start it with this one.
    seedRemembered(`replay-headline:${runId}`, value);
  }
  return value;
}

/** Four-eyes is on when any tool in the run's plan asks for it (Z3; default on). */
export async function fourEyesFor(db: DbOrTx, runId: string): Promise<boolean> {
  // DISTINCT in the database: Prisma's `distinct` would read every plan item into memory.
  const tools = await db.$queryRaw<{ tool: string }[]>`
    SELECT DISTINCT i.tool FROM plan_item i JOIN plan p ON p.id = i.plan_id WHERE i.run_id = ${runId}::uuid AND p.status = 'approved'`;
  if (tools.length === 0) return true;
  const lax = await db.toolDefinition.count({
    where: { name: { in: tools.map((t) => t.tool) }, fourEyesReplay: false },
  });
  return lax < tools.length;
}
