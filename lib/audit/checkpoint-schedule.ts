// The periodic checkpoint job: every interval, on the worker that leads (one across all workers, so
// two rounds never race), signs the chain heads that moved (./checkpoint.ts). A failed round is
// logged and retried at the next tick; a rewound chain is logged as an error every round until someone
// looks, because the job will not sign over it.
import type { Db } from '../db/client.ts';
import type { PublicKeys } from '@/lib/sdk/audit/checkpoint-signature.ts';
import { signChainHeads, type CheckpointKey } from './checkpoint.ts';

export interface CheckpointScheduleOptions {
  db: Db;
  key: CheckpointKey;
  /** Earlier keys' public keys (AUDIT_PREVIOUS_PUBLIC_KEYS). */
  trustedKeys?: PublicKeys;
  intervalMs: number;
  leader: { isLeader(): boolean };
  log: (line: string) => void;
}

export function startCheckpointSchedule(o: CheckpointScheduleOptions): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const round = async () => {
    if (!o.leader.isLeader()) return;
    try {
      const r = await signChainHeads(o.db, o.key, o.trustedKeys);
      if (r.signed) o.log(`audit checkpoint: signed ${r.signed} chain heads (key ${o.key.keyId})`);
      for (const w of r.rewound)
        o.log(`audit checkpoint: chain ${w.chain} REWOUND to seq ${w.seq}, seq ${w.signedSeq} was signed`);
      for (const u of r.untrusted)
        o.log(
          `audit checkpoint: a stored checkpoint of chain ${u.chain} at seq ${u.seq} (key ${u.keyId}) does not verify with a trusted key: ignored`,
        );
    } catch (error) {
      o.log(`audit checkpoint failed: ${(error as Error).message}`);
    }
  };
  const timer = setInterval(() => {
    running = running.then(round);
  }, o.intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
