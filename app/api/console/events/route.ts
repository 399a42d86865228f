// The live pages' change feed as server-sent events (plan, replay and support pages refresh when what
// they show changed). Any signed-in console role may listen; the session is checked when the stream
// opens (401 otherwise) and again, with the person's grants, at every heartbeat
// (lib/live/viewer-stream.ts). Each process polls once for all its listeners (lib/live/feed.ts) and
// serves at most LIVE_MAX_CONNECTIONS of them (429 beyond).
import { consoleRoute } from '@/lib/api/console-route.ts';
import { viewerLiveStream } from '@/lib/live/viewer-stream.ts';

export const dynamic = 'force-dynamic';

const HEARTBEAT_MS = 15_000;

export const GET = consoleRoute('console.read', { mutating: false }, async (g, req) => {
  const stream = await viewerLiveStream({
    db: g.db,
    cookie: req.headers.get('cookie'),
    scope: g.scope,
    signal: req.signal,
    heartbeatMs: HEARTBEAT_MS,
  });
  return new Response(stream, {
    headers: {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store, no-transform',
      Connection: 'keep-alive',
      // Tells nginx-style proxies not to buffer the stream.
      'X-Accel-Buffering': 'no',
    },
  });
});
