// The plan page's view (P1, P2): the run's latest plan, its first targets and the viewer's decision.
import { consoleViewRoute } from '@/lib/api/console-view.ts';
import { planPage } from '@/lib/read-models/views/plan-page.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleViewRoute<{ runId: string }>('plan', (v, { runId }) => planPage(v, runId));
