// The run page's view (P3): header, status, one page of the plan joined with the ledger.
import { consoleViewRoute } from '@/lib/api/console-view.ts';
import { runPage } from '@/lib/read-models/views/run-page.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleViewRoute<{ runId: string }>('run', (v, { runId }, sp) => runPage(v, runId, sp));
