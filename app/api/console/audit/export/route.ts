// Streamed audit export (A5): CSV, or JSON Lines as a signed bundle once tree heads are signed
// (lib/audit/export-download.ts).
import { auditExportResponse } from '@/lib/audit/export-download.ts';
import { consoleRoute } from '@/lib/api/console-route.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute('audit.export', { mutating: false }, auditExportResponse);
