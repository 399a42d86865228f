// Shared input pieces of the effect commands.
import { z } from 'zod';
import type { DbOrTx } from '@/lib/db/client.ts';
import type { Actor, RequestMeta } from '../actor.ts';

export interface CommandContext {
  db: DbOrTx;
  actor: Actor;
  request?: RequestMeta;
}

export const effectRef = {
  key: z.string().min(1).max(4096),
  /** The epoch the caller acted on; omitted means the key's current epoch. */
  epoch: z.number().int().positive().optional(),
};

/** A human's reason: trimmed and non-empty (A1). */
export const reasonField = z.string().trim().min(1, 'a reason is required').max(2000);

export const evidenceField = z.record(z.string(), z.unknown());
