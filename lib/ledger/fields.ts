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

/** An epoch a caller acted on. The database stores epochs as 32-bit integers: a larger number is no
 *  epoch of any effect, refused here instead of failing in the statement. */
export const epochField = z.number().int().positive().max(2_147_483_647, 'no epoch is that large');

/** A moment given with its offset, normalized to a year between 1 and 9999: the range ISO 8601 text
 *  (and every answer of the API) can carry, so the time is stored as it is answered. */
export const offsetDatetimeField = z.iso.datetime({ offset: true }).refine((text) => {
  const year = new Date(text).getUTCFullYear();
  return year >= 1 && year <= 9999;
}, 'the time must fall between the years 1 and 9999 once its offset is applied');
