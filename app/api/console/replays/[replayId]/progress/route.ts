// Live progress of one forced replay (F5) for the console's progress bar, polled about once a second.
// Read-only: anyone holding a role in the replay's workflow may look; to anyone else it is missing (Z1).
import { consoleRoute } from '@/lib/api/console-route.ts';
import { assertVisible } from '@/lib/auth/guard.ts';
import { getReplayProgress } from '@/lib/replay/index.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute<{ params: Promise<{ replayId: string }> }>(
  'console.read',
  { mutating: false },
  async (g, _req, ctx) => {
    const { replayId } = await ctx.params;
    await assertVisible(g, 'replay', replayId);
    const progress = await getReplayProgress(g, { replayId });
    return Response.json(progress, { headers: { 'Cache-Control': 'no-store' } });
  },
);
