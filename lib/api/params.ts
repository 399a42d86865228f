import { z } from 'zod';
import { effectKeyField } from '../ledger/fields.ts';

export const runParams = z.strictObject({ runId: z.uuid() });
/** An effect key, percent-encoded as one path segment (its own "/" become %2F). */
export const effectParams = z.strictObject({ key: effectKeyField });
export const attemptParams = z.strictObject({ attemptId: z.uuid() });
