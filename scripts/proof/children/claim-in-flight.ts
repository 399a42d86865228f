// The process doing an effect while holding its own database connection (the SDK's direct transport,
// as the demo seeder and jobs use it), for the crash matrix's "claim in flight" row. It connects
// (application_name from the order, so the parent can find its backend), says "ready", then runs one
// effect. The parent holds a lock that makes the claim statement wait inside PostgreSQL, kills this
// process with SIGKILL while the statement is in flight (not committed), and releases the lock.
// No hook here: the point is observed in pg_stat_activity by the parent.
import { createDb } from '@/lib/db/client.ts';
import { createLedger } from '@/lib/sdk/client.ts';
import { directTransport } from '@/lib/api/direct-transport.ts';
import { SandboxProvider } from '@/lib/sdk/sandbox.ts';
import type { ChildMessage, InFlightOrder } from '../support/faults-crash-protocol.ts';

const tell = (m: ChildMessage) => process.send?.(m);

process.once('message', (order: InFlightOrder) => {
  setInterval(() => undefined, 60_000); // alive until the SIGKILL, whatever the IPC channel does
  void (async () => {
    const db = createDb(order.appUrl, 1);
    await db.$queryRaw`SELECT 1`;
    const ledger = createLedger(
      directTransport({
        db,
        actor: { kind: 'runtime', id: order.runtimeId, label: 'crash-matrix child', workflows: ['*'] },
      }),
    );
    const provider = new SandboxProvider(order.sandboxUrl);
    tell({ type: 'at', point: 'claim-in-flight', detail: { connected: true } });
    const result = await ledger.effect(
      order.spec,
      ({ idempotencyKey, key, epoch, signal }) =>
        provider.send({ key, epoch, idempotencyKey, target: order.spec.target, payload: order.payload }, signal),
      { provider },
    );
    tell({ type: 'finished', result });
  })().catch((error: unknown) =>
    tell({ type: 'error', message: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }),
  );
});
tell({ type: 'ready', pid: process.pid });
