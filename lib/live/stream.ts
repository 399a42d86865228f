// One live page's server-sent event stream (the text/event-stream format, WHATWG HTML 9.2): `ready`
// once the feed has its starting point, `change` with what moved, `heartbeat` every few seconds so the
// browser notices a dead connection, and `signed-out` (then the end) when the session stops being
// valid while the stream is open. The subscription ends when the browser goes away.
import type { LiveChange } from '@/lib/live/change.ts';
import type { LiveListener } from '@/lib/live/feed.ts';

export interface LiveStreamOptions {
  subscribe: (listener: LiveListener) => Promise<() => void>;
  /** Checked at every heartbeat: a session signed out, disabled or changed meanwhile ends the stream. */
  stillSignedIn: () => Promise<boolean>;
  /** The request's signal: aborted when the browser disconnects. */
  signal: AbortSignal;
  heartbeatMs: number;
}

/** How long a browser waits before it reconnects by itself (the client backs off further on errors). */
const RETRY_MS = 3000;

export function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Subscribes first and only then returns the stream, so a refused subscription (too many live pages on
 * this process) is an error answer, not a stream that ends at once.
 */
export async function liveEventStream(options: LiveStreamOptions): Promise<ReadableStream<Uint8Array>> {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let unsubscribe: (() => void) | null = null;
  let heartbeat: NodeJS.Timeout | null = null;
  const send = (event: string, data: unknown) => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(sseFrame(event, data)));
    } catch {
      close();
    }
  };
  const close = () => {
    if (closed) return;
    closed = true;
    if (heartbeat) clearInterval(heartbeat);
    unsubscribe?.();
    options.signal.removeEventListener('abort', close);
    try {
      controller.close();
    } catch {
      // already closed by the other side
    }
  };
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel() {
      close();
    },
  });
  options.signal.addEventListener('abort', close);
  try {
    unsubscribe = await options.subscribe((change: LiveChange) => send('change', change));
  } catch (error) {
    close();
    throw error;
  }
  if (closed || options.signal.aborted) {
    close();
    return stream;
  }
  controller.enqueue(encoder.encode(`retry: ${RETRY_MS}\n\n`));
  send('ready', { at: new Date().toISOString() });
  heartbeat = setInterval(() => {
    options
      .stillSignedIn()
      .then((ok) => {
        if (ok) return send('heartbeat', { at: new Date().toISOString() });
        send('signed-out', { detail: 'this session is no longer valid: sign in again' });
        close();
      })
      .catch(() => send('heartbeat', { at: new Date().toISOString(), sessionCheck: 'failed' }));
  }, options.heartbeatMs);
  return stream;
}
