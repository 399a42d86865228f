// LedgerError -> HTTP, in one place. Every error body is { error: { code, message, field?, details? } }.
import { LedgerError, type LedgerErrorCode } from '../ledger/errors.ts';

export type ApiErrorCode = LedgerErrorCode | 'internal' | 'payload_too_large';

export interface ApiErrorBody {
  error: { code: ApiErrorCode; message: string; field?: string; details?: Record<string, unknown> };
}

export function statusForCode(code: ApiErrorCode): number {
  switch (code) {
    case 'validation':
      return 422;
    case 'unauthenticated':
      return 401;
    case 'forbidden':
      return 403;
    case 'not_found':
      return 404;
    case 'conflict':
    case 'invalid_transition':
      return 409;
    case 'payload_too_large':
      return 413;
    case 'internal':
      return 500;
    default:
      return code satisfies never;
  }
}

export function errorBody(
  code: ApiErrorCode,
  message: string,
  field?: string,
  details?: Record<string, unknown>,
): ApiErrorBody {
  const error: ApiErrorBody['error'] = { code, message };
  if (field) error.field = field;
  if (details && Object.keys(details).length) error.details = details;
  return { error };
}

/** The status and body for any thrown value. Unknown errors become a 500 without internals. */
export function toApiError(err: unknown): { status: number; body: ApiErrorBody } {
  if (err instanceof LedgerError) {
    const { field, ...details } = err.details;
    return { status: statusForCode(err.code), body: errorBody(err.code, err.message, field, jsonSafe(details)) };
  }
  console.error('[api] unexpected error', err);
  return {
    status: 500,
    body: errorBody(
      'internal',
      'internal error: the request may or may not have taken effect; retry with the same Idempotency-Key',
    ),
  };
}

/** Dates to ISO strings, bigints to strings: what JSON.stringify would send. */
export function jsonSafe<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))) as T;
}
