// Live progress of one forced replay (F5) for the console's progress bar, polled about once a second.
// Read-only: any signed-in console role may look.
import { consoleRoute } from '@/lib/auth/guard.ts';
import { getReplayProgress } from '@/lib/replay/index.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute<{ params: Promise<{ replayId: string }> }>(
  'console.read',
  { mutating: false },
  async (g, _req, ctx) => {
    const { replayId } = await ctx.params;
    const progress = await getReplayProgress(g, { replayId });
    return Response.json(progress, { headers: { 'Cache-Control': 'no-store' } });
  },
);
