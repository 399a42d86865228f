// The live pages' change feed as server-sent events (plan, replay and support pages refresh when what
// they show changed). Any signed-in console role may listen; the session is checked when the stream
// opens (401 otherwise) and again at every heartbeat. Each process polls once for all its listeners
// (lib/live/feed.ts) and serves at most LIVE_MAX_CONNECTIONS of them (429 beyond).
import { consoleRoute } from '@/lib/auth/guard.ts';
import { sessionFromCookie } from '@/lib/auth/session.ts';
import { liveFeed } from '@/lib/live/feed.ts';
import { changeVisibleTo } from '@/lib/live/scope.ts';
import { liveEventStream } from '@/lib/live/stream.ts';

export const dynamic = 'force-dynamic';

const HEARTBEAT_MS = 15_000;

export const GET = consoleRoute('console.read', { mutating: false }, async (g, req) => {
  const feed = liveFeed();
  const cookie = req.headers.get('cookie');
  const stream = await liveEventStream({
    subscribe: (listener) =>
      feed.subscribe((change) => {
        const visible = changeVisibleTo(change, g.scope);
        if (visible) listener(visible);
      }),
    stillSignedIn: async () => !(await sessionFromCookie(cookie, g.db)).problem,
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
