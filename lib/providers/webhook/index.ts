// Outgoing HTTP webhooks, signed per the Standard Webhooks convention (webhook-id, webhook-timestamp,
// webhook-signature "v1,<base64 HMAC-SHA256 of id.timestamp.body>"), with an Idempotency-Key header
// (R2). The webhook-id is the ledger's idempotency key, so a retry of one (key, epoch) carries the
// same id and receivers dedupe it. Only hosts configured for the tool are ever contacted: any other
// target is refused before a socket is opened.
import { createHmac } from 'node:crypto';
import { parseKey } from '@/lib/ledger/keys.ts';
import type { Classification, LookupResult, Provider, RawResponse, SendRequest } from '../types.ts';
import { callFailure, type ProviderSettingsBase } from '../types.ts';
import { incompleteAnswer, rawFromFetch, readLookup } from '../http-answer.ts';
import { webhookSecretProblem, webhookSigningKey } from './secret.ts';

export interface WebhookSettings extends ProviderSettingsBase {
  type: 'webhook';
  /** Tool name -> host names (exact, lower-case, optionally host:port) that tool may call. */
  allowedHosts: Record<string, string[]>;
  timeoutSeconds?: number;
  /** Response header carrying the receiver's id for the delivery; else the JSON body's "id". */
  receiptHeader?: string;
  /** GET `${lookupUrl}?receipt=<r>` -> 200 {found, state?}; 404 a miss. */
  lookupUrl?: string;
  /** The signing secret ("whsec_" + base64), from the environment (WEBHOOK_SIGNING_SECRET). */
  secret: string;
}

export function signStandardWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = webhookSigningKey(secret);
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** Errors that prove no byte of the request left this process: the connection was never established
 *  (refused, no such host, no route, connect timeout). Only the syscall says so: an error code alone
 *  does not, since Linux reports an ICMP unreachable (EHOSTUNREACH, ENETUNREACH) on an open socket as
 *  well, after the body went out, and freeing the key then would send the target again (S3, S4).
 *  undici wraps the socket error in `cause`, and with several addresses (localhost: ::1 and
 *  127.0.0.1) in an AggregateError whose every member must be a connect failure. Anything after the
 *  connection was made is ambiguous. */
export function neverConnected(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 4) return false;
  const e = error as { syscall?: string; cause?: unknown; errors?: unknown[] };
  if (Array.isArray(e.errors) && e.errors.length > 0) return e.errors.every((m) => neverConnected(m, depth + 1));
  if (e.syscall === 'connect' || e.syscall === 'getaddrinfo') return true;
  return neverConnected(e.cause, depth + 1);
}

function errorCode(error: unknown): string | null {
  for (
    let e = error as { code?: unknown; cause?: unknown } | undefined, i = 0;
    e && i < 5;
    e = e.cause as typeof e, i++
  )
    if (typeof e.code === 'string') return e.code;
  return null;
}

export class WebhookProvider implements Provider {
  readonly name: string;
  readonly supportsIdempotencyKey = true;
  readonly supportsReceiptLookup: boolean;

  constructor(
    name: string,
    readonly settings: WebhookSettings,
  ) {
    this.name = name;
    this.supportsReceiptLookup = Boolean(settings.lookupUrl);
    if (!settings.secret) throw new Error(`webhook provider ${name}: no signing secret (set WEBHOOK_SIGNING_SECRET)`);
    const problem = webhookSecretProblem(settings.secret);
    if (problem) throw new Error(`webhook provider ${name}: WEBHOOK_SIGNING_SECRET is unusable: ${problem}`);
  }

  /** Whether the tool that owns `key` may call `target`. */
  hostAllowed(key: string, target: string): boolean {
    const tool = parseKey(key).tool;
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return false;
    }
    const allowed = (this.settings.allowedHosts[tool] ?? []).map((h) => h.toLowerCase());
    return allowed.includes(url.host.toLowerCase()) || allowed.includes(url.hostname.toLowerCase());
  }

  async send(request: SendRequest, signal?: AbortSignal): Promise<RawResponse> {
    if (!this.hostAllowed(request.key, request.target)) {
      throw callFailure(
        'no',
        `host of ${request.target} is not configured for tool ${parseKey(request.key).tool}; nothing was sent`,
        // permanent: the same target is refused again on every retry, so a replay settles it as failed
        // instead of retrying its chunk (lib/replay/send-item.ts).
        { refused: 'host_not_allowed', permanent: true },
      );
    }
    const parsed = parseKey(request.key);
    const body = JSON.stringify({
      type: `${parsed.tool}.${parsed.action}`,
      recordId: parsed.recordId,
      epoch: request.epoch,
      data: request.payload,
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const id = request.idempotencyKey;
    let res: Response;
    try {
      res = await fetch(request.target, {
        method: 'POST',
        redirect: 'manual', // a redirect could lead to a host nobody configured
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signStandardWebhook(this.settings.secret, id, timestamp, body),
          'idempotency-key': id,
        },
        body,
        // The caller's deadline and the configured timeout both apply: whichever comes first.
        signal: AbortSignal.any([
          ...(signal ? [signal] : []),
          AbortSignal.timeout((this.settings.timeoutSeconds ?? 15) * 1000),
        ]),
      });
    } catch (error) {
      // Refused connection: nothing was sent, the key may be freed (S3). A timeout or a reset after
      // the request was written: the receiver may have acted, so the outcome is unknown (S4).
      throw callFailure(
        neverConnected(error) ? 'no' : 'maybe',
        `webhook to ${new URL(request.target).host}: ${(error as Error).message}`,
        { code: errorCode(error) },
      );
    }
    // Status and headers are in: from here on the receiver has answered, and what it said is kept even
    // when the body is cut off or too long (http-answer.ts); classify calls that unknown (S4).
    return rawFromFetch(res);
  }

  classify(response: RawResponse): Classification {
    const incomplete = incompleteAnswer(response);
    if (incomplete) return { outcome: 'unknown', evidence: incomplete };
    const header = (name: string) => response.headers.find(([k]) => k.toLowerCase() === name)?.[1];
    const bodyText = new TextDecoder().decode(response.body);
    const status = response.status;
    if (status >= 200 && status < 300) {
      let receipt = header((this.settings.receiptHeader ?? 'webhook-receipt').toLowerCase());
      if (!receipt) {
        try {
          const id = (JSON.parse(bodyText) as { id?: unknown }).id;
          if (typeof id === 'string' || typeof id === 'number') receipt = String(id);
        } catch {
          /* not JSON: no receipt */
        }
      }
      // S2: a 2xx without anything we can look up later never reaches done on its own.
      if (!receipt) return { outcome: 'unknown', evidence: { status, why: 'accepted without a receipt' } };
      return { outcome: 'done', receipt };
    }
    const location = header('location');
    if (status === 409 && location)
      return { outcome: 'already_existed', reference: location, evidence: { status, body: bodyText.slice(0, 2000) } };
    // Only a definitive 4xx refuses (S3), as in lib/sdk/classify.ts. 408 and 429 decide nothing yet, a
    // 409 without a pointer is answered while a delivery with the same webhook-id may still succeed,
    // a redirect (not followed) may come after the receiver acted (303), and a 5xx may come after it
    // acted too: all unknown (S4), for the reconciler and support rather than a resend.
    if (status >= 400 && status < 500 && status !== 408 && status !== 409 && status !== 429)
      return { outcome: 'failed', evidence: { status, body: bodyText.slice(0, 2000) } };
    return {
      outcome: 'unknown',
      evidence: { status, why: 'no final answer about the delivery', body: bodyText.slice(0, 2000) },
    };
  }

  async lookup(receipt: string, signal?: AbortSignal): Promise<LookupResult> {
    if (!this.settings.lookupUrl) throw new Error(`provider ${this.name} has no receipt lookup configured`);
    const url = new URL(this.settings.lookupUrl);
    url.searchParams.set('receipt', receipt);
    const res = await fetch(url, { signal: signal ?? AbortSignal.timeout(10_000) });
    const { raw, hit } = await readLookup(res, url.host);
    return hit ? { found: true, receipt, state: hit.state, raw } : { found: false, raw };
  }
}
