// The events people are told about, one function per hook. Each is called inside the transaction
// that records the event (a request is created or decided, a replay completes), reads what it needs
// through that transaction, and writes the notifications with it (tell.ts).
import { canOn, canSomewhere, inScope, scopeOf } from '@/lib/auth/grants.ts';
import { ROLES, can } from '@/lib/auth/permissions.ts';
import { workflowsOfSubject } from '@/lib/auth/subject-workflows.ts';
import type { DbOrTx } from '@/lib/db/client.ts';
import { APPROVING_PERMISSION, type NotificationKind } from './kinds.ts';
import { tell, type NotificationEventInput } from './tell.ts';
import { enqueueWebhooks } from './webhooks/enqueue.ts';
import { notificationRoutes } from './webhooks/stored-routes.ts';
import { plural } from '@/lib/plural.ts';

type ApprovalRow = {
  id: string;
  kind: string;
  runId: string | null;
  payload: unknown;
  reason: string;
  requestedById: string;
  expiresAt: Date;
  status: string;
  decidedById: string | null;
};

function describeRequest(r: ApprovalRow): string {
  const payload = (r.payload ?? {}) as { items?: unknown[]; count?: number };
  return r.kind === 'replay'
    ? `Forced replay of ${plural(payload.count ?? 0, 'target')}`
    : `Epoch bump of ${plural(payload.items?.length ?? 0, 'key')}`;
}

function requestLink(r: ApprovalRow): string {
  return r.kind === 'replay' && r.runId ? `/runs/${r.runId}/replay` : `/approvals#approval-${r.id}`;
}

async function emailOf(tx: DbOrTx, userId: string | null): Promise<string> {
  if (!userId) return 'nobody';
  const u = await tx.user.findUnique({ where: { id: userId }, select: { email: true } });
  return u?.email ?? 'a removed user';
}

/** The people who may approve this request: those whose grants allow the approving permission on
 *  every workflow the request concerns (Z1), never the requester (Z3), not disabled. */
export async function eligibleApprovers(
  tx: DbOrTx,
  request: { id: string; kind: string; requestedById: string },
): Promise<string[]> {
  const permission = APPROVING_PERMISSION[request.kind];
  if (!permission) return [];
  const roles = ROLES.filter((role) => can(role, permission));
  const about = await workflowsOfSubject(tx, 'approval', [request.id]);
  const workflows = about?.workflows ?? [];
  const people = await tx.user.findMany({
    where: { disabled: false, id: { not: request.requestedById }, grants: { some: { role: { in: roles } } } },
    select: { id: true, grants: { select: { role: true, workflow: true } } },
  });
  return people
    .filter((p) =>
      workflows.length ? workflows.every((w) => canOn(p.grants, permission, w)) : canSomewhere(p.grants, permission),
    )
    .map((p) => p.id);
}

/** Of these people, those who still see every workflow the subject touches (Z1): a requester whose
 *  grant was removed since is not told how it ended, nor who decided it. */
async function whoStillSee(
  tx: DbOrTx,
  userIds: string[],
  subject: { type: 'approval' | 'replay'; id: string },
): Promise<string[]> {
  const workflows = (await workflowsOfSubject(tx, subject.type, [subject.id]))?.workflows ?? [];
  const people = await tx.user.findMany({
    where: { id: { in: userIds } },
    select: { id: true, grants: { select: { role: true, workflow: true } } },
  });
  return people
    .filter((p) => {
      const scope = scopeOf(p.grants);
      return scope.all || (workflows.length > 0 && workflows.every((w) => inScope(scope, w)));
    })
    .map((p) => p.id);
}

/** The people are told (the inbox, email), and the chat routes that take the event get it as well
 *  (./webhooks), in the same transaction. */
async function announce(
  tx: DbOrTx,
  event: NotificationEventInput,
  subject: { type: 'approval' | 'replay'; id: string },
  /** A chat channel is read by a team, not by the person the inbox row addresses. */
  chat: () => Promise<{ title: string; text?: string }> | { title: string; text?: string },
): Promise<number> {
  const told = await tell(tx, event);
  const routes = await notificationRoutes(tx);
  if (routes.length > 0) {
    const workflows = (await workflowsOfSubject(tx, subject.type, [subject.id]))?.workflows ?? [];
    const { title, text } = await chat();
    await enqueueWebhooks(
      tx,
      {
        type: event.kind,
        subjectId: event.subjectId,
        workflows,
        title,
        text: text ?? event.body,
        link: event.link,
      },
      { routes },
    );
  }
  return told;
}

/** A four-eyes request was created: every eligible approver is told. */
export async function notifyApprovalWaiting(tx: DbOrTx, approvalRequestId: string): Promise<number> {
  const r = await tx.approvalRequest.findUnique({ where: { id: approvalRequestId } });
  if (!r) return 0;
  return announce(
    tx,
    {
      kind: 'approval.waiting',
      subjectId: r.id,
      recipients: await eligibleApprovers(tx, r),
      title: `${describeRequest(r)} waits for your approval`,
      body: `${await emailOf(tx, r.requestedById)} asked: ${r.reason}. It expires at ${utcText(r.expiresAt)}.`,
      link: requestLink(r),
    },
    { type: 'approval', id: r.id },
    () => ({ title: `${describeRequest(r)} waits for a second operator's approval` }),
  );
}

/** A request was approved, rejected or expired (an open request past its expiry counts as expired):
 *  its requester is told. Cancelled requests tell nobody. */
export async function notifyApprovalOutcome(tx: DbOrTx, approvalRequestId: string): Promise<number> {
  const r = await tx.approvalRequest.findUnique({ where: { id: approvalRequestId } });
  if (!r) return 0;
  const expired = r.status === 'expired' || (r.status === 'open' && r.expiresAt.getTime() <= Date.now());
  const kind: NotificationKind | null = expired
    ? 'approval.expired'
    : r.status === 'approved'
      ? 'approval.approved'
      : r.status === 'rejected'
        ? 'approval.rejected'
        : null;
  if (!kind) return 0;
  const what = describeRequest(r);
  const body = expired
    ? `Nobody decided it before ${utcText(r.expiresAt)}. Ask again if it is still needed.`
    : `${r.status === 'approved' ? 'Approved' : 'Rejected'} by ${await emailOf(tx, r.decidedById)}.`;
  return announce(
    tx,
    {
      kind,
      subjectId: r.id,
      recipients: await whoStillSee(tx, [r.requestedById], { type: 'approval', id: r.id }),
      title: `${what}: ${expired ? 'expired' : r.status}`,
      body: `${body} You asked: ${r.reason}`,
      link: requestLink(r),
    },
    { type: 'approval', id: r.id },
    async () => ({
      title: `${what}: ${expired ? 'expired' : r.status}`,
      text: `${body} ${await emailOf(tx, r.requestedById)} asked: ${r.reason}`,
    }),
  );
}

/** A replay completed: its requester is told, as failed when any target failed or is unknown. */
export async function notifyReplayEnded(tx: DbOrTx, replayId: string): Promise<number> {
  const r = await tx.replay.findUnique({ where: { id: replayId } });
  if (!r || r.status !== 'completed') return 0;
  const failed = r.failed + r.unknown > 0;
  return announce(
    tx,
    {
      kind: failed ? 'replay.failed' : 'replay.finished',
      subjectId: r.id,
      recipients: await whoStillSee(tx, [r.requestedById], { type: 'replay', id: r.id }),
      title: failed
        ? `Your replay finished with ${r.failed} failed and ${plural(r.unknown, 'unknown target')}`
        : `Your replay of ${plural(r.total, 'target')} finished`,
      body: `Sent ${r.sent}, skipped ${r.skipped}, failed ${r.failed}, unknown ${r.unknown} of ${r.total}.`,
      link: `/runs/${r.runId}/replay`,
    },
    { type: 'replay', id: r.id },
    () => ({
      title: failed
        ? `A replay finished with ${r.failed} failed and ${plural(r.unknown, 'unknown target')}`
        : `A replay of ${plural(r.total, 'target')} finished`,
    }),
  );
}

/** The console's one time format (components/time.tsx), for a notification's text. */
function utcText(d: Date): string {
  return `${d.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}
