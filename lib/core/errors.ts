// One error class for every refusal in lib/; lib/core/problem.ts maps the code to HTTP in one place.
import { InvalidInputError } from '../sdk/errors.ts';
export type LedgerErrorCode =
  | 'validation' // 422: bad input, names the field
  | 'unauthenticated' // 401
  | 'forbidden' // 403: the actor may not do this
  | 'not_found' // 404
  | 'conflict' // 409: state conflict (in flight, stale epoch, duplicate)
  | 'invalid_transition' // 409: S7, the transition table refuses it
  | 'payload_too_large' // 413: a body over the size or nesting limit
  | 'unsupported_media_type' // 415: a body sent as something other than JSON
  | 'rate_limited' // 429: too many attempts from this source
  | 'unavailable'; // 503: a dependency (the database) cannot be reached now

export interface LedgerErrorDetails {
  /** The input field at fault, for validation errors (dot path). */
  field?: string;
  [key: string]: unknown;
}

export class LedgerError extends Error {
  readonly code: LedgerErrorCode;
  readonly details: LedgerErrorDetails;

  constructor(code: LedgerErrorCode, message: string, details: LedgerErrorDetails = {}) {
    super(message);
    this.name = 'LedgerError';
    this.code = code;
    this.details = details;
  }
}

export const invalid = (field: string, message: string, extra: Record<string, unknown> = {}) =>
  new LedgerError('validation', message, { field, ...extra });
export const notFound = (message: string, extra: Record<string, unknown> = {}) =>
  new LedgerError('not_found', message, extra);
export const forbidden = (message: string, extra: Record<string, unknown> = {}) =>
  new LedgerError('forbidden', message, extra);
export const conflict = (message: string, extra: Record<string, unknown> = {}) =>
  new LedgerError('conflict', message, extra);

/** The key derivation and target normalization live in the SDK (lib/sdk/keys.ts, normalize.ts), which
 *  refuses with its own InvalidInputError; the server sees those refusals as LedgerError('validation'),
 *  naming the same field, so the plan's per-item reasons and the 422 answers stay as they are. */
export function refusalsAsLedgerErrors<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  return (...args) => {
    try {
      return fn(...args);
    } catch (error) {
      if (error instanceof InvalidInputError) throw invalid(error.field, error.message);
      throw error;
    }
  };
}
