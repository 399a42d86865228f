// The audit trail's view (A1, A2): one page of entries, the chain verification, the export's right.
// The read model writes nothing; this route records each read on the trail itself (audit.read), in
// the same request, after the page was read.
import { consoleViewRoute } from '@/lib/api/console-view.ts';
import { readAuditPage, recordAuditPageRead } from '@/lib/read-models/views/audit-page.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleViewRoute('audit trail', async (v, _p, sp) => {
  const page = await readAuditPage(v, sp);
  await recordAuditPageRead(v, page, sp);
  return page;
});
