// The errors the SDK throws. LedgerApiError is an answer of the agent API (an RFC 9457 problem
// document, the same from every transport) or the lack of one (network, timeout, aborted);
// InvalidInputError is an input the key derivation refuses before anything is sent.
import type { OutcomeRequest, ProblemCode } from './types.ts';

/** Failures without a problem document: no connection or a dropped one (`network`), no answer within
 *  the timeout (`timeout`), the caller's signal (`aborted`), an error answer that is not a problem
 *  document, e.g. from a proxy (`http_error`). Their `status` is 0, or the HTTP status for `http_error`. */
export type TransportErrorCode = 'network' | 'timeout' | 'aborted' | 'http_error';

export type LedgerApiErrorCode = ProblemCode | TransportErrorCode;

export class LedgerApiError extends Error {
  /**
   * Set when this error ended an outcome report: the report that did not reach the ledger, with the
   * provider's raw response in it (`response`). Keep it or send it again with
   * `ledger.transport.reportOutcome(error.unreported)`: the raw response is never dropped silently.
   */
  unreported?: OutcomeRequest;

  constructor(
    /** The HTTP status; 0 when no answer came (network, timeout, aborted). */
    readonly status: number,
    // A server newer than this SDK may answer with a code it does not list yet.
    readonly code: LedgerApiErrorCode | (string & {}),
    message: string,
    /** The input field at fault (dot path), for `validation`. */
    readonly field?: string,
    /** The problem document's other members (e.g. `blocking`, `targets`), and `attempts` for retried requests. */
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LedgerApiError';
  }
}

/** An input the key derivation or target normalization refuses (K2, K3); `field` names it. */
export class InvalidInputError extends Error {
  readonly code = 'validation';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'InvalidInputError';
  }
}

export const invalid = (field: string, message: string) => new InvalidInputError(field, message);
