// Draining the web server on SIGTERM, as load balancers and process managers expect: the listener
// closes (no new connections), idle keep-alive connections are closed at once, and every answer
// still to be written says `Connection: close`, so each busy connection ends after its answer
// instead of taking the client's next request. Live pages' event streams are closed (the browser
// reconnects, to another instance). Whatever is still open when the grace period runs out is cut.
//
// Node's server.close() alone is not enough: it closes the connections idle at that instant, but a
// connection busy then goes back to idle after its answer and keeps being reused by a keep-alive
// client, so the process answered requests until it was killed. Hand-written rather than a
// library's because it is these few calls on Node's own server (closeIdleConnections,
// closeAllConnections) and no maintained package covers the event streams.
import type { Server, ServerResponse } from 'node:http';

export interface Drain {
  /** True once stop() was called. */
  readonly draining: boolean;
  /** Stops accepting and drains; resolves once every connection is closed (cut after graceMs). */
  stop(graceMs: number): Promise<{ cut: number }>;
}

const EVENT_STREAM = /^text\/event-stream/i;

/** Headers given to writeHead() are not readable back with getHeader(): note an event stream there. */
function noteEventStreams(res: ServerResponse, streams: WeakSet<ServerResponse>): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    const headers = args.find((a) => a !== null && typeof a === 'object');
    const pairs = Array.isArray(headers)
      ? (headers as unknown[]).map((value, i, all) => (i % 2 === 0 ? [value, all[i + 1]] : null)).filter(Boolean)
      : Object.entries((headers ?? {}) as Record<string, unknown>);
    for (const [name, value] of pairs as [unknown, unknown][])
      if (String(name).toLowerCase() === 'content-type' && EVENT_STREAM.test(String(value))) streams.add(this);
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['writeHead'];
}

export function drainable(server: Server): Drain {
  let draining = false;
  const open = new Set<ServerResponse>();
  const streams = new WeakSet<ServerResponse>();
  const isEventStream = (res: ServerResponse) =>
    streams.has(res) || EVENT_STREAM.test(String(res.getHeader('content-type') ?? ''));
  // Registered before the application's handler (call drainable() before listen()), so the header is
  // set before anything is written.
  server.prependListener('request', (_req, res: ServerResponse) => {
    if (draining) res.setHeader('connection', 'close');
    noteEventStreams(res, streams);
    open.add(res);
    res.once('close', () => open.delete(res));
  });

  return {
    get draining() {
      return draining;
    },
    stop(graceMs) {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const res of open) {
        if (!res.headersSent) res.setHeader('connection', 'close');
        else if (isEventStream(res)) res.destroy(); // the stream's producer sees 'close' and stops
      }
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), graceMs);
        timer.unref();
      });
      return Promise.race([closed.then(() => 'closed' as const), late]).then(async (how) => {
        clearTimeout(timer);
        const cut = how === 'late' ? open.size : 0;
        if (how === 'late') {
          server.closeAllConnections();
          await closed;
        }
        return { cut };
      });
    },
  };
}
