// The audit trail's view (A1, A2): one page of entries, the chain verification, the export's right.
// Each read is recorded on the trail itself (audit.read, lib/read-models/views/audit-page.ts).
import { consoleViewRoute } from '@/lib/api/console-view.ts';
import { auditPage } from '@/lib/read-models/views/audit-page.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleViewRoute('audit trail', (v, _p, sp) => auditPage(v, sp));
