// One interface for every delivery channel (sandbox, SMTP, webhooks). A provider sends with the
// idempotency key derived from (key, epoch) (R2), returns the raw response untouched so the caller
// stores it before anything parses it (R1), classifies it, and looks receipts up (C1).
// Its one home is the SDK, because agent teams implement it for their own channels; the server's
// providers (lib/providers) import it from here.

/** The provider's full raw response: status, header pairs in order, body bytes as received. */
export interface RawResponse {
  status: number;
  headers: [string, string][];
  body: Uint8Array;
}

export interface SendRequest {
  key: string;
  epoch: number;
  /** From the ledger claim (R2); sent where the provider accepts one. */
  idempotencyKey: string;
  /** The normalized target. */
  target: string;
  /** Tool-specific content (subject, body, ...): generated text lives here and never in the key. */
  payload: Record<string, unknown>;
}

/** What a raw response means for the ledger. */
export type Classification =
  | { outcome: 'done'; receipt: string }
  | { outcome: 'failed'; evidence: Record<string, unknown> }
  | { outcome: 'unknown'; evidence: Record<string, unknown> }
  | { outcome: 'stuck'; evidence: Record<string, unknown> }
  /** R3: a pointer to a prior object, to be followed before anything is decided. */
  | { outcome: 'already_existed'; reference: string; evidence: Record<string, unknown> };

export type LookupResult =
  | { found: true; receipt: string; state: 'delivered' | 'accepted' | 'failed'; raw: RawResponse }
  | { found: false; raw: RawResponse };

export interface Provider {
  readonly name: string;
  readonly supportsIdempotencyKey: boolean;
  readonly supportsReceiptLookup: boolean;
  /** Resolves with the raw response, or rejects when no response came (timeout, connection lost). */
  send(request: SendRequest, signal?: AbortSignal): Promise<RawResponse>;
  classify(response: RawResponse): Classification;
  /** Read-only receipt lookup. Throws on a provider error (C3: which changes nothing). */
  lookup(receipt: string, signal?: AbortSignal): Promise<LookupResult>;
  /** R3: read the prior object an "already existed" reply points at. */
  followReference?(reference: string, signal?: AbortSignal): Promise<LookupResult>;
  // How the ledger can learn the fate of a send whose answer was lost (the process died between the
  // call and its report). A provider declares each way it offers by implementing it; the ledger tries
  // them in this order (lib/replay/interrupted-fate.ts), and without any the key waits for a person.
  /** Read-only lookup of the message sent with this idempotency key (a miss proves nothing alone: the
   *  lost call may still be on its way to the provider). Throws on a provider error. */
  lookupByIdempotencyKey?(idempotencyKey: string, signal?: AbortSignal): Promise<LookupResult>;
  /** The receipt the provider gives a message sent with this key, known before the call (SMTP: the
   *  Message-ID derived from the key), to be looked up with lookup(). */
  receiptHint?(idempotencyKey: string): string;
  /** How long the provider answers a repeat of an idempotency key with the original message instead of
   *  sending again: a re-send with the same key inside this window is safe, and tells the fate. */
  readonly idempotencyWindowSeconds?: number;
}

/** Whether anything may have left this process when a call failed without a response. */
export type SentState = 'no' | 'maybe';
export interface CallFailure extends Error {
  providerSent: SentState;
  detail: Record<string, unknown>;
}

/** A provider call that ended with no response. 'no': provably nothing was sent (refused connection,
 *  host not allowed), the key may be freed (S3). 'maybe': ambiguous (timeout mid-call), S4. */
export function callFailure(sent: SentState, message: string, detail: Record<string, unknown> = {}): CallFailure {
  return Object.assign(new Error(message), { providerSent: sent, detail });
}

export function isCallFailure(error: unknown): error is CallFailure {
  return (
    error instanceof Error &&
    ((error as CallFailure).providerSent === 'no' || (error as CallFailure).providerSent === 'maybe')
  );
}

/** A fetch Response as a RawResponse: status, header pairs, the body bytes as received. */
export async function rawFromResponse(response: Response): Promise<RawResponse> {
  const headers: [string, string][] = [];
  response.headers.forEach((value, name) => headers.push([name, value]));
  return { status: response.status, headers, body: new Uint8Array(await response.arrayBuffer()) };
}
