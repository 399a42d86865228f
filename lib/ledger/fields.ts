// Input fields shared by every command that takes them, so their limits and messages live once.
import { z } from 'zod';

/** A person's reason for a decision: trimmed and non-empty (A1: why, required from humans). */
export const reasonField = z.string().trim().min(1, 'a reason is required').max(2000);

/** A note a person may add where the decision itself is the record (an approval's comment). */
export const optionalReasonField = z.string().trim().max(2000).optional();

/** An effect key as the console and the API pass it around. */
export const effectKeyField = z.string().min(1).max(4096);

/** The keys a bulk decision acts on. */
export const effectKeysField = z.array(effectKeyField).min(1, 'pick at least one target').max(10_000);
