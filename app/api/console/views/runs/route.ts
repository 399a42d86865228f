// The runs list's view: one page of runs with the URL's filters, and the workflows to filter by.
import { consoleViewRoute } from '@/lib/api/console-view.ts';
import { runsPage } from '@/lib/read-models/views/runs-page.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleViewRoute('runs', (v, _p, sp) => runsPage(v, sp));
