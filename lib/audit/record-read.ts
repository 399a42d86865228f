// Reading the trail is itself on the trail (A1): who looked, with which filter and page.
import type { DbOrTx } from '@/lib/db/client.ts';
import type { Actor, RequestMeta } from '@/lib/core/actor.ts';
import type { AuditFilter } from '@/lib/read-models/audit.ts';
import { appendAudit } from './append.ts';

export async function recordAuditRead(
  db: DbOrTx,
  input: { actor: Actor; filter: AuditFilter; cursor: string | null; request: RequestMeta },
): Promise<void> {
  await appendAudit(db, {
    chain: 'audit:read',
    actor: input.actor,
    action: 'audit.read',
    subjectType: 'audit',
    subjectId: 'page',
    detail: {
      filter: Object.fromEntries(
        Object.entries(input.filter).flatMap(([k, v]) => (v === undefined ? [] : [[k, wellFormed(v)]])),
      ),
      cursor: wellFormed(input.cursor ?? '') || null,
    },
    request: input.request,
  });
}

// jsonb refuses lone surrogates: the recorded filter keeps a replacement character instead.
function wellFormed(s: string): string {
  return s.replace(/\p{Cs}/gu, '\uFFFD');
}
