// Streamed audit export (A5): CSV or JSON Lines of the filtered trail as evidence (every hashed field,
// lib/read-models/audit-export.ts), oldest first, fetched from
// the database a thousand rows at a time so any size streams in constant memory. The filter is checked
// before anything streams (a bad one is a 422 naming the parameter, not a 200 that breaks mid-stream or
// silently exports more than asked), and every export is itself written to the audit trail (so a
// cross-site request is refused before that entry is written).
import { appendAudit, auditRefusal } from '@/lib/audit/append.ts';
import { consoleRoute } from '@/lib/auth/guard.ts';
import { crossSiteProblem, requestInfoFromHeaders } from '@/lib/auth/request.ts';
import { forbidden } from '@/lib/ledger/errors.ts';
import { exportRequestFrom } from '@/lib/read-models/audit.ts';
import {
  auditExportStream,
  CSV_COLUMNS,
  csvLine,
  exportSummary,
  isFiltered,
  jsonLine,
} from '@/lib/read-models/audit-export.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute('audit.export', { mutating: false }, async (g, req) => {
  // A read, but one that writes its audit.export entry: another site must not make a signed-in
  // browser write it (Z2). Refused and audited as refused, as a mutating action's cross-site call is.
  const cross = crossSiteProblem(requestInfoFromHeaders(req.headers));
  if (cross) {
    await auditRefusal(g.db, {
      chain: 'audit:export',
      actor: g.actor,
      action: 'audit.export',
      subjectType: 'audit',
      subjectId: 'export',
      why: cross,
      request: g.request,
    });
    throw forbidden(cross);
  }
  const url = new URL(req.url);
  const { format, filter } = exportRequestFrom(url.searchParams);
  await appendAudit(g.db, {
    chain: 'audit:export',
    actor: g.actor,
    action: 'audit.export',
    subjectType: 'audit',
    subjectId: 'export',
    detail: { format, filter: Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)) },
    request: g.request,
  });
  const rows = auditExportStream(g.db, filter, g.scope);
  const summary = exportSummary(isFiltered(filter), g.scope);
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if (format === 'csv') controller.enqueue(encoder.encode(CSV_COLUMNS.join(',') + '\r\n'));
    },
    async pull(controller) {
      const next = await rows.next();
      if (next.done) {
        // JSON Lines closes with the seq range per chain (what a partial export holds); see docs/AUDIT.md.
        if (format === 'jsonl') controller.enqueue(encoder.encode(summary.line()));
        return controller.close();
      }
      summary.add(next.value);
      controller.enqueue(encoder.encode(format === 'csv' ? csvLine(next.value) : jsonLine(next.value)));
    },
    async cancel() {
      await rows.return(undefined);
    },
  });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return new Response(stream, {
    headers: {
      'Content-Type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'Content-Disposition': `attachment; filename="audit-${stamp}.${format === 'csv' ? 'csv' : 'jsonl'}"`,
      'Cache-Control': 'no-store',
    },
  });
});
