// The background verification job (A2): on the worker that leads (lib/ops/leader.ts), one pass at
// start and then every intervalMs (./verification.ts). Passes never overlap; a failed pass is logged and
// the next tick tries again. A broken trail is logged at every pass until someone repairs it.
import type { Db } from '../db/client.ts';
import { runAuditVerification } from './verification.ts';

export const AUDIT_VERIFY_INTERVAL_MS = 10_000;

export function startAuditVerificationSchedule(o: {
  db: Db;
  leader: { isLeader(): boolean };
  intervalMs?: number;
  log: (line: string) => void;
}): { stop(): Promise<void> } {
  let pass: Promise<void> = Promise.resolve();
  let running = false;
  const tick = () => {
    if (running || !o.leader.isLeader()) return;
    running = true;
    pass = runAuditVerification(o.db)
      .then((r) => {
        if (r.stored.state === 'broken')
          o.log(
            `audit verification (${r.kind}): chain ${r.stored.chain} BROKEN at entry ${r.stored.entryId ?? '(missing)'} #${r.stored.seq}: ${r.stored.problem}`,
          );
        else if (r.kind === 'full') o.log(`audit verification (full): ${r.entries} entries verified`);
      })
      .catch((error: unknown) => o.log(`audit verification failed: ${(error as Error).message}`))
      .finally(() => {
        running = false;
      });
  };
  tick();
  const timer = setInterval(tick, o.intervalMs ?? AUDIT_VERIFY_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await pass;
    },
  };
}
