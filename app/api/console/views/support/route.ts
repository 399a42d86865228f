// The support queue's view: one page of unknowns with the URL's filters, and what the viewer may resolve.
import { consoleViewRoute } from '@/lib/api/console-view.ts';
import { supportPage } from '@/lib/read-models/views/support-page.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleViewRoute('support queue', (v, _p, sp) => supportPage(v, sp));
