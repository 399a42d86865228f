// Shared input pieces of the effect commands.
import { z } from 'zod';
import type { DbOrTx } from '@/lib/db/client.ts';
import type { Actor, RequestMeta } from '@/lib/core/actor.ts';
import { effectKeyField, epochField } from '../fields.ts';

export interface CommandContext {
  db: DbOrTx;
  actor: Actor;
  request?: RequestMeta;
}

export const effectRef = {
  key: effectKeyField,
  /** The epoch the caller acted on; omitted means the key's current epoch. */
  epoch: epochField.optional(),
};

export const evidenceField = z.record(z.string(), z.unknown());
