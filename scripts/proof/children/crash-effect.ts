// The process doing an effect, for the crash matrix (scripts/proof/parts/crash-matrix.ts). It loads
// only the SDK (HTTP transport) and the sandbox client, says "ready", then takes one effect over IPC
// and runs it through the product's own path: ledger.effect -> POST /effects/claim -> provider ->
// POST /effects/outcome (with the raw response). The crash points are hooks of this child
// alone (a wrapped fetch and a wrapped provider call), never branches inside lib/: when the effect
// reaches the requested point the child tells the parent and waits forever; the parent kills it with
// SIGKILL. Nothing here ever reaches the point twice or continues after it.
import { createLedger } from '@/lib/sdk/client.ts';
import { httpTransport } from '@/lib/sdk/http.ts';
import { SandboxProvider } from '@/lib/sdk/sandbox.ts';

import type { ChildMessage, CrashOrder, CrashPoint } from '../support/faults-crash-protocol.ts';

const tell = (m: ChildMessage) => process.send?.(m);
/** Waits until the SIGKILL. A timer keeps the process alive: once the one 'message' listener is gone
 *  the IPC channel no longer does, and a child with nothing left to do would exit by itself (code 0). */
const forever = (): Promise<never> => {
  setInterval(() => undefined, 60_000);
  return new Promise<never>(() => undefined);
};
function reached(point: CrashPoint, detail: Record<string, unknown> = {}): Promise<never> {
  tell({ type: 'at', point, detail });
  return forever();
}

async function run(order: CrashOrder): Promise<void> {
  const at = order.point;
  const hookedFetch: typeof fetch = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    // The claim request has not left this process: the claim cannot have committed.
    if (at === 'before-claim-commit' && url.endsWith('/effects/claim')) return reached(at, { url });
    const response = await fetch(input, init);
    if (at === 'after-claim-commit' && url.endsWith('/effects/claim') && response.status === 201)
      return reached(at, { status: response.status });
    if (at === 'after-receipt-written' && url.endsWith('/effects/outcome') && response.ok)
      return reached(at, { status: response.status });
    return response;
  };
  const ledger = createLedger(
    httpTransport({ baseUrl: order.baseUrl, runtimeKey: order.runtimeKey, fetch: hookedFetch, retries: 0 }),
  );
  const provider = new SandboxProvider(order.sandboxUrl);
  const result = await ledger.effect(
    order.spec,
    async ({ idempotencyKey, key, epoch, signal }) => {
      const raw = await provider.send(
        { key, epoch, idempotencyKey, target: order.spec.target, payload: order.payload },
        signal,
      );
      // The provider answered; nothing of its answer has reached the ledger yet.
      if (at === 'after-provider-answer') return reached(at, { status: raw.status });
      return raw;
    },
    { provider, timeoutMs: 60_000 },
  );
  tell({ type: 'finished', result });
}

process.once('message', (order: CrashOrder) => {
  run(order).catch((error: unknown) =>
    tell({ type: 'error', message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }),
  );
});
tell({ type: 'ready', pid: process.pid });
