// Reading an HTTP provider's answer (a webhook receiver's reply, a receipt lookup). The receiver is a
// third party: a body read whole into memory lets one that streams without end exhaust the worker,
// so at most BODY_CAP_BYTES are kept. A body that was not read whole (past the cap, or cut off by a
// reset or the deadline once status and headers were in) keeps what did arrive, and a header pair
// appended after the provider's own says so. It travels with the raw response (R1), so every
// classification of it, now or by the reconciler later, sees that the answer is incomplete: such an
// answer is never done (S2).
import type { RawResponse } from './types.ts';

export const BODY_CAP_BYTES = 1024 * 1024;
/** Appended when the body went past the cap: the first BODY_CAP_BYTES are kept. */
export const TRUNCATED_HEADER = 'x-effect-ledger-body-truncated';
/** Appended when reading the body failed part way: the bytes that arrived are kept. */
export const BODY_ERROR_HEADER = 'x-effect-ledger-body-error';

/** Status, header pairs and at most `cap` body bytes of a fetch Response; never throws. */
export async function rawFromFetch(res: Response, cap = BODY_CAP_BYTES): Promise<RawResponse> {
  const headers: [string, string][] = [...res.headers.entries()];
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body?.getReader();
  try {
    for (let part = await reader?.read(); part && !part.done; part = await reader!.read()) {
      const room = cap - size;
      if (part.value.byteLength > room) {
        chunks.push(part.value.subarray(0, room));
        size = cap;
        headers.push([TRUNCATED_HEADER, `the body went past ${cap} bytes; the first ${cap} are kept`]);
        // Stop the transfer: the rest is never read.
        await reader!.cancel().catch(() => undefined);
        break;
      }
      chunks.push(part.value);
      size += part.value.byteLength;
    }
  } catch (error) {
    headers.push([BODY_ERROR_HEADER, `reading the body failed after ${size} bytes: ${(error as Error).message}`]);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.byteLength;
  }
  return { status: res.status, headers, body };
}

/** Why an answer is incomplete (evidence for an unknown outcome), or null when it was read whole. */
export function incompleteAnswer(raw: RawResponse): Record<string, unknown> | null {
  const truncated = raw.headers.find(([k]) => k === TRUNCATED_HEADER)?.[1];
  const failed = raw.headers.find(([k]) => k === BODY_ERROR_HEADER)?.[1];
  if (truncated === undefined && failed === undefined) return null;
  return {
    status: raw.status,
    ...(truncated !== undefined ? { truncated: true, capBytes: BODY_CAP_BYTES } : {}),
    ...(failed !== undefined ? { bodyError: failed } : {}),
    keptBytes: raw.body.byteLength,
    why: 'the answer was not read whole: whatever it said about the effect is not known',
  };
}

/** The states a receipt lookup may report, and what the ledger does with each: delivered and
 *  accepted complete the key (S2), failed never does. */
export type LookupState = 'delivered' | 'accepted' | 'failed';

/**
 * A receipt lookup's answer (`GET ...` -> 200 `{found, state?, ...}`, 404 a miss). Throws when the
 * lookup itself failed (an error status, a body cut off part way, not JSON), which changes nothing
 * (C3). `hit` is null for a miss, and for any answer that settles nothing: one past the size cap, or a
 * state other than delivered, accepted (also when none is given) or failed, such as bounced,
 * deferred or awaiting completion. A miss never makes a key done; after the settle window the key
 * is unknown, for support (C2).
 */
export async function readLookup(
  res: Response,
  where: string,
): Promise<{ raw: RawResponse; hit: { state: LookupState; body: Record<string, unknown> } | null }> {
  const raw = await rawFromFetch(res);
  const incomplete = incompleteAnswer(raw);
  if (incomplete?.bodyError) throw new Error(`lookup at ${where}: ${String(incomplete.bodyError)}`);
  if (res.status === 404 || incomplete) return { raw, hit: null };
  if (res.status !== 200) throw new Error(`lookup at ${where} answered ${res.status}`);
  const body = JSON.parse(new TextDecoder().decode(raw.body)) as Record<string, unknown> | null;
  const state = body?.state ?? 'accepted';
  if (body?.found !== true || (state !== 'delivered' && state !== 'accepted' && state !== 'failed'))
    return { raw, hit: null };
  return { raw, hit: { state, body } };
}
