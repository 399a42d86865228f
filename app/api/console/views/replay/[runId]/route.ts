// The forced replay page's view (F1-F5, Z3): one page of the preview, the run's replays with their
// progress and reports, and what the viewer may do there.
import { consoleViewRoute } from '@/lib/api/console-view.ts';
import { replayPage } from '@/lib/read-models/views/replay-page.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleViewRoute<{ runId: string }>('run', (v, { runId }, sp) => replayPage(v, runId, sp));
