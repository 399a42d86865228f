// What the audit page sends of each entry to its table: the cells as the table shows them, worked out
// on the server (the subject's name, the change, the why), so the page carries the entry's shown
// fields only, not its whole detail or hash.
import type { AuditRow } from '@/lib/read-models/audit.ts';
import { subjectRef } from '@/lib/read-models/subject-names.ts';

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

export function auditRowView(r: AuditRow, names: Record<string, string>): AuditRowView {
  const why =
    r.reason ??
    (r.detail && typeof r.detail === 'object' && 'why' in r.detail ? String((r.detail as { why: unknown }).why) : '');
  return {
    id: r.id,
    at: r.at,
    actor: r.actorLabel,
    actorRole: r.actorRole ?? r.actorKind,
    action: r.action,
    subjectId: r.subjectId,
    subjectHref:
      r.subjectType === 'effect'
        ? `/target?key=${encodeURIComponent(r.subjectId)}`
        : r.subjectType === 'run'
          ? `/runs/${r.subjectId}`
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
