// A target (one effect key): every epoch, every attempt with its raw provider response, every
// transition with who, when and why, and the audit entries about it.
import type { Db } from '../db/client.ts';
import { inScope, type WorkflowScope } from '@/lib/auth/grants.ts';
import { isUuid } from '../uuid.ts';

function prettyBody(bytes: Uint8Array | null): {
  text: string | null;
  pretty: string | null;
  base64: string | null;
  size: number;
} {
  if (!bytes) return { text: null, pretty: null, base64: null, size: 0 };
  const buf = Buffer.from(bytes);
  const text = buf.toString('utf8');
  const isText = !text.includes('\uFFFD');
  let pretty: string | null = null;
  if (isText) {
    try {
      pretty = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      pretty = null;
    }
  }
  return { text: isText ? text : null, pretty, base64: isText ? null : buf.toString('base64'), size: buf.length };
}

/** null for a key that does not exist or whose run belongs to a workflow outside the viewer's scope (Z1). */
export async function targetDetail(db: Db, key: string, scope: WorkflowScope) {
  const head = await db.effectKey.findUnique({ where: { key } });
  if (!head) return null;
  const run = await db.run.findUnique({ where: { id: head.runId }, select: { workflow: true } });
  if (!run || !inScope(scope, run.workflow)) return null;
  const [effects, attempts, transitions, planItems, audit] = await Promise.all([
    db.effect.findMany({ where: { key }, orderBy: { epoch: 'desc' } }),
    db.attempt.findMany({ where: { key }, orderBy: [{ epoch: 'desc' }, { startedAt: 'asc' }] }),
    db.effectTransition.findMany({ where: { key }, orderBy: [{ epoch: 'desc' }, { id: 'asc' }] }),
    db.planItem.findMany({ where: { key }, select: { planId: true, runId: true }, take: 20 }),
    // An effect's entries live on its own chain and its refusals' chain (index audit_entry(chain, seq)).
    db.auditEntry.findMany({
      where: { chain: { in: [`effect:${key}`, `refused:effect:${key}`] } },
      orderBy: { id: 'desc' },
      take: 100,
    }),
  ]);
  const userIds = [...new Set(transitions.filter((t) => t.actorKind === 'user').map((t) => t.actorId))];
  const users = new Map(
    (await db.user.findMany({ where: { id: { in: userIds } }, select: { id: true, email: true, role: true } })).map(
      (u) => [u.id, u],
    ),
  );
  const runtimeIds = [
    ...new Set(transitions.filter((t) => t.actorKind === 'runtime' && isUuid(t.actorId)).map((t) => t.actorId)),
  ];
  const runtimes = new Map(
    (await db.runtimeKey.findMany({ where: { id: { in: runtimeIds } }, select: { id: true, name: true } })).map((k) => [
      k.id,
      `runtime key ${k.name}`,
    ]),
  );
  return {
    head,
    workflow: run.workflow,
    epochs: effects.map((e) => ({
      ...e,
      id: String(e.id),
      attempts: attempts
        .filter((a) => a.epoch === e.epoch)
        .map((a) => ({
          id: a.id,
          startedAt: a.startedAt,
          respondedAt: a.respondedAt,
          status: a.responseStatus,
          headers: (a.responseHeaders as [string, string][] | null) ?? null,
          body: prettyBody(a.responseBody),
        })),
      transitions: transitions
        .filter((t) => t.epoch === e.epoch)
        .map((t) => ({
          id: String(t.id),
          from: t.fromState,
          to: t.toState,
          actorKind: t.actorKind,
          actor:
            t.actorKind === 'user'
              ? (users.get(t.actorId)?.email ?? t.actorId)
              : (runtimes.get(t.actorId) ?? t.actorId),
          role: t.actorKind === 'user' ? (users.get(t.actorId)?.role ?? null) : null,
          reason: t.reason,
          evidence: t.evidence,
          at: t.at,
        })),
    })),
    planItems,
    audit: audit.map((a) => ({ ...a, id: String(a.id) })),
  };
}

/** A planned target nobody has claimed yet: its key is only in a plan. The page offers what may be
 *  decided on it (S5: revoke before a replay, when its plan is approved). null when the key is in no
 *  plan of a run the viewer may see (Z1). */
export async function plannedTarget(db: Db, key: string, scope: WorkflowScope) {
  const [row] = await db.$queryRaw<
    {
      target: string;
      tool: string;
      action: string;
      record_id: string;
      run_id: string;
      workflow: string;
      trigger_id: string;
      plan_status: string;
    }[]
  >`
    SELECT pi.target, pi.tool, pi.action, pi.record_id, pi.run_id, r.workflow, e.trigger_id, p.status::text AS plan_status
      FROM plan_item pi JOIN plan p ON p.id = pi.plan_id JOIN run r ON r.id = pi.run_id JOIN event e ON e.id = r.event_id
     WHERE pi.key = ${key}
     ORDER BY (p.status = 'approved') DESC, pi.id DESC LIMIT 1`;
  if (!row || !inScope(scope, row.workflow)) return null;
  return {
    key,
    target: row.target,
    tool: row.tool,
    action: row.action,
    recordId: row.record_id,
    runId: row.run_id,
    workflow: row.workflow,
    triggerId: row.trigger_id,
    planApproved: row.plan_status === 'approved',
  };
}
