// The audit tree's periodic work, on the worker that leads: every AUDIT_TREE_SEQUENCE_SECONDS the
// committed entries not yet in the tree are integrated (./store.ts), and every
// AUDIT_CHECKPOINT_INTERVAL_SECONDS the head is signed when a signer is configured (./signer.ts). A
// refused head is alerted by the signer every round until someone looks; a failed round is logged and
// retried at the next tick.
import type { Db } from '@/lib/db/client.ts';
import { signTreeHead, type TreeSigner } from './signer.ts';
import { integrateAll } from './store.ts';

export interface TreeScheduleOptions {
  db: Db;
  /** The signer and its own connection (../signer-connection.ts): only it may store a signed head. */
  signer?: { config: TreeSigner; db: Db };
  sequenceMs: number;
  signMs: number;
  leader: { isLeader(): boolean };
  log: (line: string) => void;
}

export function startTreeSchedule(o: TreeScheduleOptions): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let signedAt = 0;
  const round = async () => {
    if (!o.leader.isLeader()) return;
    try {
      await integrateAll(o.db);
      if (!o.signer || Date.now() - signedAt < o.signMs) return;
      signedAt = Date.now();
      const r = await signTreeHead(o.signer.db, o.signer.config, { log: o.log });
      if (r.kind === 'signed') o.log(`audit tree: signed the head at ${r.size} leaves`);
    } catch (error) {
      o.log(`audit tree round failed: ${(error as Error).message}`);
    }
  };
  const timer = setInterval(() => {
    running = running.then(round);
  }, o.sequenceMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
