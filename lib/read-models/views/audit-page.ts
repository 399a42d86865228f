// Everything the audit trail's page shows (A1, A2): one page of the entries the filter matches, each
// as the table shows it, the chain verification the background job stored with its age, and whether
// the viewer may export. Within the viewer's scope (Z1), as every read. Reading the trail is itself on
// the trail (who looked, with which filter and page): a read model writes nothing, so whoever serves
// the page records the read after it (recordAuditPageRead below, lib/audit/record-read.ts), in the same
// request, and the page shows the trail as it was when asked for.
import { recordAuditRead } from '@/lib/audit/record-read.ts';
import { canSomewhere } from '@/lib/auth/grants.ts';
import { userActor, type Guarded } from '@/lib/auth/guard.ts';
import {
  auditFilterFrom,
  auditFilterProblem,
  auditPage as auditEntries,
  type AuditFilter,
  type AuditRow,
} from '@/lib/read-models/audit.ts';
import { chainVerification, describeAge, type ChainVerificationView } from '@/lib/read-models/audit-chain.ts';
import { executorReplayId, subjectNames, subjectRef } from '@/lib/read-models/subject-names.ts';
import type { ConsoleViewer } from './viewer.ts';
import { one, pageSize, type SP } from './query.ts';

/** What the page sends of each entry to its table: the cells as the table shows them, worked out on
 *  the server (the subject's name, the change, the why), so the view carries the entry's shown fields
 *  only, not its whole detail or hash. */
export interface AuditRowView {
  id: string;
  at: Date;
  actor: string;
  actorRole: string;
  action: string;
  subjectId: string;
  /** Where the subject links to (an effect's target page, a run), or null. */
  subjectHref: string | null;
  subjectLabel: string;
  change: string;
  why: string;
  outcome: string;
  ip: string;
}

export interface AuditPage {
  /** The filter as read from the address: the form shows it, the export links carry it. */
  filter: AuditFilter;
  /** An inverted date range, named on its field. */
  problem: { field: 'to'; message: string } | null;
  rows: AuditRowView[];
  /** The cursor of the next (older) page, or null on the last. */
  next: string | null;
  chain: ChainVerificationView;
  /** The verification's age as the badge says it ("40 s"), null before the first verification. */
  chainAge: string | null;
  canExport: boolean;
}

/** One page of the trail as the viewer may see it. Writes nothing. */
export async function readAuditPage(v: ConsoleViewer, sp: SP): Promise<AuditPage> {
  const filter = auditFilterFrom(sp);
  const cursor = one(sp, 'cursor');
  const [page, chain] = await Promise.all([
    auditEntries(v.db, filter, v.scope, cursor, pageSize(sp)),
    chainVerification(v.db, v.scope),
  ]);
  const names = await subjectNames(v.db, page.rows);
  return {
    filter,
    problem: auditFilterProblem(filter),
    rows: page.rows.map((r) => auditRowView(r, names)),
    next: page.next,
    chain,
    chainAge: chain.state === 'unverified' ? null : describeAge(chain.ageSeconds),
    canExport: canSomewhere(v.user.grants, 'audit.export'),
  };
}

/** Records that `v` read this page of the trail (A1): who, with which filter and page, and where the
 *  request came from. The person's own role (not the role through which console.read was found). */
export async function recordAuditPageRead(
  v: ConsoleViewer & Pick<Guarded, 'request'>,
  page: Pick<AuditPage, 'filter'>,
  sp: SP,
): Promise<void> {
  await recordAuditRead(v.db, {
    actor: userActor(v.user),
    filter: page.filter,
    cursor: one(sp, 'cursor') ?? null,
    request: v.request,
  });
}

function auditRowView(r: AuditRow, names: Record<string, string>): AuditRowView {
  const why =
    r.reason ??
    (r.detail && typeof r.detail === 'object' && 'why' in r.detail ? String((r.detail as { why: unknown }).why) : '');
  return {
    id: r.id,
    at: r.at,
    actor: executorOf(r, names) ?? r.actorLabel,
    actorRole: r.actorRole ?? r.actorKind,
    action: r.action,
    subjectId: r.subjectId,
    subjectHref:
      r.subjectType === 'effect'
        ? `/target?key=${encodeURIComponent(r.subjectId)}`
        : r.subjectType === 'run'
          ? `/runs/${r.subjectId}`
          : r.subjectType === 'replay' && r.runId
            ? `/runs/${r.runId}/replay`
            : null,
    subjectLabel:
      r.subjectType === 'effect'
        ? r.subjectId
        : (names[subjectRef(r.subjectType, r.subjectId)] ?? `${r.subjectType} ${r.subjectId}`),
    change: r.beforeState || r.afterState ? `${r.beforeState ?? '∅'} → ${r.afterState ?? '∅'}` : '',
    why,
    outcome: r.outcome,
    ip: r.ip ?? '',
  };
}

/** A replay's executor named by its replay ("executor of replay of receipts · evt_1"), not its id. */
function executorOf(r: AuditRow, names: Record<string, string>): string | null {
  const replayId = r.actorKind === 'executor' ? executorReplayId(r.actorLabel) : undefined;
  const name = replayId ? names[subjectRef('replay', replayId)] : undefined;
  return name ? `executor of the ${name}` : null;
}
