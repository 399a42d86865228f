// The wire form of a provider's raw response (R1), as the ledger stores it: what the API accepts of
// one response, and how a larger one is cut and marked instead of refused.
import type { RawResponse } from './provider.ts';

/** A raw response on the wire: the bytes as base64. */
export interface EncodedRawResponse {
  status: number;
  headers: [string, string][];
  bodyBase64: string;
}

/** What the ledger stores of one raw response (R1): its body up to 1 MiB, at most 500 header pairs,
 *  names up to 1,024 and values up to 16,384 characters (the API refuses more). The built-in
 *  providers keep the same 1 MiB. */
export const RAW_LIMITS = { bodyBytes: 1024 * 1024, headers: 500, nameLength: 1024, valueLength: 16_384 } as const;

/** The header pair that marks a stored response as cut to RAW_LIMITS. */
export const RAW_CUT_HEADER = 'x-effect-ledger-cut';

/**
 * The wire form of a raw response: the bytes as base64, status and header pairs as received, within
 * RAW_LIMITS. A response over them is cut, and the cut is said in one added header pair: sent whole,
 * the report itself would be refused, and the outcome with it (the effect left for support). The
 * caller's classification has already seen the whole response.
 */
export function encodeRawResponse(raw: RawResponse): EncodedRawResponse {
  const cuts: string[] = [];
  let body = raw.body;
  if (body.byteLength > RAW_LIMITS.bodyBytes) {
    cuts.push(`body of ${body.byteLength} bytes, the first ${RAW_LIMITS.bodyBytes} kept`);
    body = body.subarray(0, RAW_LIMITS.bodyBytes);
  }
  let headers = raw.headers;
  const long = headers.some(([n, v]) => n.length > RAW_LIMITS.nameLength || v.length > RAW_LIMITS.valueLength);
  if (long) {
    cuts.push('long header names or values shortened');
    headers = headers.map(([n, v]) => [n.slice(0, RAW_LIMITS.nameLength), v.slice(0, RAW_LIMITS.valueLength)]);
  }
  if (headers.length + (cuts.length ? 1 : 0) > RAW_LIMITS.headers) {
    cuts.push(`${raw.headers.length} header pairs, the first ${RAW_LIMITS.headers - 1} kept`);
    headers = headers.slice(0, RAW_LIMITS.headers - 1);
  }
  if (cuts.length) headers = [...headers, [RAW_CUT_HEADER, cuts.join('; ')]];
  return { status: raw.status, headers, bodyBase64: Buffer.from(body).toString('base64') };
}
