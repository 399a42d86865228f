// What a raw response means when the provider brings no classifier of its own.
import type { Classification, RawResponse } from './provider.ts';

/** A generic HTTP classifier: 2xx with an id is done, a definitive 4xx is failed, the rest unknown.
 *  Not definitive: 408 and 429 (nothing decided yet) and 409, which providers answer while a request
 *  with the same idempotency key is still running and may yet succeed. */
export function classifyHttp(raw: RawResponse): Classification {
  let body: Record<string, unknown> | null;
  try {
    body = JSON.parse(new TextDecoder().decode(raw.body)) as Record<string, unknown>;
  } catch {
    body = null;
  }
  const evidence = { status: raw.status, body: body ?? new TextDecoder().decode(raw.body).slice(0, 2000) };
  if (raw.status >= 200 && raw.status < 300) {
    const id = body?.id ?? body?.messageId ?? body?.transactionId;
    return typeof id === 'string' && id
      ? { outcome: 'done', receipt: id }
      : { outcome: 'unknown', evidence: { ...evidence, why: 'success without a receipt (S2)' } };
  }
  if (raw.status >= 400 && raw.status < 500 && ![408, 409, 429].includes(raw.status))
    return { outcome: 'failed', evidence };
  return { outcome: 'unknown', evidence };
}
