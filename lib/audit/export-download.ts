// The console's audit export download (A5): CSV, or JSON Lines, which is a signed bundle
// (./export-bundle.ts) whenever the ledger signs tree heads (AUDIT_SIGNING_KEY and a signed head in
// the database), and the unsigned version 2 export before the first head is signed. The filter is
// checked before anything streams (a bad one is a 422 naming the parameter, not a 200 that breaks
// mid-stream or silently exports more than asked), and every export is itself written to the audit
// trail (so a cross-site request is refused before that entry is written).
import { appendAudit, auditRefusal } from '@/lib/audit/append.ts';
import type { Guarded } from '@/lib/auth/guard.ts';
import { crossSiteProblem, requestInfoFromHeaders } from '@/lib/auth/request.ts';
import { env } from '@/lib/env.ts';
import { forbidden, LedgerError } from '@/lib/core/errors.ts';
import { exportRequestFrom } from '@/lib/read-models/audit.ts';
import {
  auditExportStream,
  CSV_COLUMNS,
  csvLine,
  exportSummary,
  isFiltered,
  jsonLine,
} from '@/lib/read-models/audit-export.ts';
import { loadCheckpointKey, type CheckpointKey } from './checkpoint.ts';
import { auditBundleLines, type BundleHead } from './export-bundle.ts';
import { newestHead } from './tree/api.ts';

/** The key and the newest signed head a bundle is cut at, or null when heads are not signed yet. */
async function bundleSource(g: Guarded): Promise<{ key: CheckpointKey; head: BundleHead } | null> {
  const e = env();
  if (!e.AUDIT_SIGNING_KEY) return null;
  const key = loadCheckpointKey(e.AUDIT_SIGNING_KEY);
  try {
    const head = await newestHead(g.db, { origin: e.AUDIT_TREE_ORIGIN, privateKey: key.privateKey });
    return { key, head: { ...head, origin: e.AUDIT_TREE_ORIGIN } };
  } catch (error) {
    if (error instanceof LedgerError && error.code === 'not_found') return null;
    throw error;
  }
}

async function* unsignedLines(g: Guarded, filter: ReturnType<typeof exportRequestFrom>['filter'], csv: boolean) {
  if (csv) yield CSV_COLUMNS.join(',') + '\r\n';
  const summary = exportSummary(isFiltered(filter), g.scope);
  for await (const e of auditExportStream(g.db, filter, g.scope)) {
    summary.add(e);
    yield csv ? csvLine(e) : jsonLine(e);
  }
  // JSON Lines closes with the seq range per chain (what a partial export holds); see docs/AUDIT.md.
  if (!csv) yield summary.line();
}

export async function auditExportResponse(g: Guarded, req: Request): Promise<Response> {
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
  const bundle = format === 'jsonl' ? await bundleSource(g) : null;
  await appendAudit(g.db, {
    chain: 'audit:export',
    actor: g.actor,
    action: 'audit.export',
    subjectType: 'audit',
    subjectId: 'export',
    detail: {
      format,
      filter: Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)),
      ...(bundle && { bundle: { tree_size: bundle.head.size } }),
    },
    request: g.request,
  });
  const lines = bundle
    ? auditBundleLines(g.db, filter, g.scope, bundle.head, bundle.key)
    : unsignedLines(g, filter, format === 'csv');
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await lines.next();
      if (next.done) return controller.close();
      controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await lines.return(undefined);
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
}
