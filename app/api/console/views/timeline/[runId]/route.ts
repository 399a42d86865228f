// A run's timeline view: one page of the run's events in time order, filtered by kind and target.
import { consoleViewRoute } from '@/lib/api/console-view.ts';
import { timelinePage } from '@/lib/read-models/views/timeline-page.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleViewRoute<{ runId: string }>('run', (v, { runId }, sp) => timelinePage(v, runId, sp));
