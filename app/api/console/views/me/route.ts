// The navigation's data alone, for pages rendered on the server (the views carry it themselves).
import { consoleViewRoute } from '@/lib/api/console-view.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleViewRoute('person', async () => ({}));
