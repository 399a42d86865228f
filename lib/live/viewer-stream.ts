// One viewer's live stream: the process's shared change feed narrowed to the workflows the viewer sees
// (Z1). The session is read again at every heartbeat, and with it the viewer's grants: a grant removed
// while the page stays open narrows the stream from the next heartbeat on, and a session signed out,
// disabled or changed ends it.
import type { DbOrTx } from '@/lib/db/client.ts';
import { scopeOf, type WorkflowScope } from '@/lib/auth/grants.ts';
import { sessionFromCookie } from '@/lib/auth/session.ts';
import { liveFeed } from './feed.ts';
import { changeVisibleTo } from './scope.ts';
import { liveEventStream } from './stream.ts';

export function viewerLiveStream(o: {
  db: DbOrTx;
  /** The request's cookie header: the session to check again at each heartbeat. */
  cookie: string | null;
  /** The viewer's workflows when the stream opens. */
  scope: WorkflowScope;
  signal: AbortSignal;
  heartbeatMs: number;
}): Promise<ReadableStream<Uint8Array>> {
  let scope = o.scope;
  return liveEventStream({
    subscribe: (listener) =>
      liveFeed().subscribe((change) => {
        const visible = changeVisibleTo(change, scope);
        if (visible) listener(visible);
      }),
    stillSignedIn: async () => {
      const session = await sessionFromCookie(o.cookie, o.db);
      if (session.problem) return false;
      scope = scopeOf(session.user.grants);
      return true;
    },
    signal: o.signal,
    heartbeatMs: o.heartbeatMs,
  });
}
