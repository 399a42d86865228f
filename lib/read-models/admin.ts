// Admin pages and the approvals page: the rows each shows, within the viewer's scope (Z1).
import type { Db } from '../db/client.ts';
import { inScope, workflowWhere, type WorkflowScope } from '@/lib/auth/grants.ts';
import { keysOfPayload } from '@/lib/auth/subject-workflows.ts';

export async function usersPage(db: Db) {
  return db.user.findMany({
    orderBy: [{ disabled: 'asc' }, { email: 'asc' }],
    select: {
      id: true,
      email: true,
      name: true,
      role: true,
      disabled: true,
      createdAt: true,
      updatedAt: true,
      grants: { select: { id: true, role: true, workflow: true }, orderBy: [{ workflow: 'asc' }, { role: 'asc' }] },
    },
  });
}

/** The workflows that have runs, offered when granting a role on one workflow. */
export async function knownWorkflows(db: Db): Promise<string[]> {
  const rows = await db.run.findMany({
    distinct: ['workflow'],
    select: { workflow: true },
    orderBy: { workflow: 'asc' },
  });
  return rows.map((r) => r.workflow);
}

export const RUNTIME_KEYS_PER_PAGE = 25;

/**
 * One page of runtime keys, active first then newest; `q` matches any part of the name or prefix
 * (any case) or a workflow exactly. Offset paging: keys number in the hundreds, not millions.
 */
export async function runtimeKeysPage(db: Db, options: { q?: string; page?: number } = {}) {
  const q = options.q?.trim();
  const where = q
    ? {
        OR: [
          { name: { contains: q, mode: 'insensitive' as const } },
          { prefix: { contains: q, mode: 'insensitive' as const } },
          { workflows: { has: q } },
        ],
      }
    : {};
  const total = await db.runtimeKey.count({ where });
  const pages = Math.max(1, Math.ceil(total / RUNTIME_KEYS_PER_PAGE));
  const page = Math.min(Math.max(1, Math.floor(options.page ?? 1) || 1), pages);
  const rows = await db.runtimeKey.findMany({
    where,
    orderBy: [{ revokedAt: { sort: 'desc', nulls: 'first' } }, { createdAt: 'desc' }, { id: 'asc' }],
    skip: (page - 1) * RUNTIME_KEYS_PER_PAGE,
    take: RUNTIME_KEYS_PER_PAGE,
  });
  return { rows, total, page, pages };
}

export async function toolsPage(db: Db) {
  return db.toolDefinition.findMany({ orderBy: { name: 'asc' } });
}

/** Requests about runs of workflows in scope, each with the workflows it touches (what a person may
 *  decide on it depends on their roles there): its run's, and for a bump those of all its keys, which
 *  may span several. A request shows only when every workflow it touches is in scope, decided or not:
 *  its key list, count and reason are about all of them. */
async function visibleRequests<R extends { id: string; runId: string | null; payload: unknown; status: string }>(
  db: Db,
  requests: R[],
  scope: WorkflowScope,
): Promise<(R & { workflows: string[] })[]> {
  // A bump request made today carries its workflows; an older one has its keys looked up.
  const stored = new Map(requests.map((r) => [r.id, storedWorkflows(r.payload)]));
  const keysOf = new Map(requests.map((r) => [r.id, stored.get(r.id) ? [] : keysOfPayload(r.payload)]));
  const allKeys = [...new Set([...keysOf.values()].flat())];
  const runOfKey = new Map(
    (await db.effectKey.findMany({ where: { key: { in: allKeys } }, select: { key: true, runId: true } })).map((k) => [
      k.key,
      k.runId,
    ]),
  );
  const runsOf = (r: R) =>
    [r.runId, ...keysOf.get(r.id)!.map((k) => runOfKey.get(k))].filter((id): id is string => Boolean(id));
  const runIds = [...new Set(requests.flatMap(runsOf))];
  const runs = await db.run.findMany({ where: { id: { in: runIds } }, select: { id: true, workflow: true } });
  const workflowOf = new Map(runs.map((r) => [r.id, r.workflow]));
  const out: (R & { workflows: string[] })[] = [];
  for (const r of requests) {
    const workflows = [...new Set([...(stored.get(r.id) ?? []), ...runsOf(r).map((id) => workflowOf.get(id))])]
      .filter((w): w is string => Boolean(w))
      .sort();
    if (scope.all || (workflows.length > 0 && workflows.every((w) => inScope(scope, w)))) out.push({ ...r, workflows });
  }
  return out;
}

/** The workflows a bump request's set touches, as stored with it (null for a request made before). */
function storedWorkflows(payload: unknown): string[] | null {
  const workflows = (payload as { workflows?: unknown } | null)?.workflows;
  return Array.isArray(workflows) && workflows.every((w) => typeof w === 'string') ? workflows : null;
}

/** Items of a bump request shown with their recipient and state; the rest are counted. */
export const APPROVAL_ITEMS_SHOWN = 50;

export type ApprovalItem = Awaited<ReturnType<typeof approvalsPage>>[number]['items'][number];

export async function approvalsPage(db: Db, scope: WorkflowScope) {
  const requests = await visibleRequests(
    db,
    await db.approvalRequest.findMany({ orderBy: [{ requestedAt: 'desc' }], take: 100 }),
    scope,
  );
  const ids = [
    ...new Set(requests.flatMap((r) => [r.requestedById, r.decidedById].filter((x): x is string => Boolean(x)))),
  ];
  const users = new Map(
    (await db.user.findMany({ where: { id: { in: ids } }, select: { id: true, email: true } })).map((u) => [
      u.id,
      u.email,
    ]),
  );
  const notes = await decisionNotes(db, requests);
  // Bump requests carry their (key, epoch) items: an approver decides on recipients and states, so
  // each shown item is read with its target and its state now (the first ITEMS_SHOWN of each).
  const itemsOf = (r: (typeof requests)[number]) =>
    ((r.payload as { items?: { key: string; epoch: number }[] }).items ?? []).slice(0, APPROVAL_ITEMS_SHOWN);
  const keys = [...new Set(requests.flatMap((r) => itemsOf(r).map((i) => i.key)))];
  const current = new Map(
    (
      await db.effectKey.findMany({
        where: { key: { in: keys } },
        select: { key: true, target: true, state: true, currentEpoch: true },
      })
    ).map((k) => [k.key, k]),
  );
  // Runs are named by workflow and event, as everywhere in the console.
  const runIds = [...new Set(requests.map((r) => r.runId).filter((id): id is string => Boolean(id)))];
  const runName = new Map(
    (
      await db.run.findMany({
        where: { id: { in: runIds } },
        select: { id: true, workflow: true, event: { select: { triggerId: true } } },
      })
    ).map((r) => [r.id, `${r.workflow} · ${r.event.triggerId}`]),
  );
  const now = Date.now();
  return requests.map((r) => {
    // Replay requests carry only the frozen count (their set is reviewed on the replay page).
    const payload = r.payload as { items?: { key: string; epoch: number }[]; count?: number; replayId?: string };
    const items = payload.items ?? [];
    return {
      id: r.id,
      kind: r.kind,
      runId: r.runId,
      runName: r.runId ? (runName.get(r.runId) ?? null) : null,
      workflows: r.workflows,
      reason: r.reason,
      setHash: r.setHash,
      requestedAt: r.requestedAt,
      expiresAt: r.expiresAt,
      status: r.status === 'open' && r.expiresAt.getTime() <= now ? 'expired' : r.status,
      requestedById: r.requestedById,
      requestedBy: users.get(r.requestedById) ?? r.requestedById,
      decidedBy: r.decidedById ? (users.get(r.decidedById) ?? r.decidedById) : null,
      decidedAt: r.decidedAt,
      decisionNote: notes.get(payload.replayId ?? r.id) ?? null,
      count: payload.count ?? items.length,
      items: itemsOf(r).map((i) => {
        const k = current.get(i.key);
        return {
          key: i.key,
          epoch: i.epoch,
          target: k?.target ?? null,
          stateNow: k?.state ?? null,
          epochNow: k?.currentEpoch ?? null,
        };
      }),
    };
  });
}

/** What the deciding person wrote, read from the decision's own audit entry (A1 keeps it there): a
 *  bump decision names the request, a replay decision names its replay. */
async function decisionNotes(
  db: Db,
  requests: readonly { id: string; status: string; payload: unknown; runId: string | null }[],
): Promise<Map<string, string>> {
  const decided = requests.filter((r) => r.status === 'approved' || r.status === 'rejected');
  if (decided.length === 0) return new Map();
  // Looked up by chain (indexed): a bump decision is on its request's chain, a replay's on its run's.
  const chains = decided.map((r) =>
    (r.payload as { replayId?: string }).replayId && r.runId ? `run:${r.runId}` : `approval:${r.id}`,
  );
  const subjects = decided.map((r) => (r.payload as { replayId?: string }).replayId ?? r.id);
  const entries = await db.auditEntry.findMany({
    where: {
      chain: { in: [...new Set(chains)] },
      subjectId: { in: subjects },
      outcome: 'ok',
      action: { in: ['approval.approve', 'approval.reject', 'replay.approve', 'replay.reject'] },
      reason: { not: null },
    },
    select: { subjectId: true, reason: true },
    orderBy: { id: 'asc' },
  });
  return new Map(entries.map((e) => [e.subjectId, e.reason ?? '']));
}

/** Email of each user id, for pages that name who requested or decided something. */
export async function userLabels(db: Db, ids: readonly string[]): Promise<Record<string, string>> {
  if (ids.length === 0) return {};
  const users = await db.user.findMany({ where: { id: { in: [...ids] } }, select: { id: true, email: true } });
  return Object.fromEntries(users.map((u) => [u.id, u.email]));
}

export async function submittedPlans(db: Db, scope: WorkflowScope) {
  return db.plan.findMany({
    where: { status: 'submitted', run: workflowWhere(scope) },
    orderBy: { submittedAt: 'asc' },
    take: 100,
    include: { run: { include: { event: true } } },
  });
}
