// The sandbox provider's client as a Provider (./provider.ts): sends with the ledger's idempotency
// key (R2), returns the raw response untouched (R1), classifies it, looks receipts up (C1) and
// follows "already existed" pointers (R3). It ships with the SDK (`@effect-ledger/sdk/sandbox`) so
// an agent can run against the sandbox before its real provider exists; the server's worker and the
// demo use the same class (lib/providers/sandbox). The sandbox server is not part of the SDK.
import http from 'node:http';
import https from 'node:https';
import {
  callFailure,
  type Classification,
  type LookupResult,
  type Provider,
  type RawResponse,
  type SendRequest,
} from './provider.ts';

// Calls go over node:http with a keep-alive agent: a replay sends thousands of small requests, and
// fetch (undici, web streams, a new abort signal plumbing per call) cost more CPU than the ledger's
// own queries. Idle sockets are dropped after 4 s, before a Node server's 5 s keep-alive timeout,
// so a request is not written onto a socket the server is closing.
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 }),
};

// An answer's body is read up to a cap, so a server that streams without end cannot exhaust the
// process. Past the cap the first BODY_CAP_BYTES are kept and a header pair appended after the
// server's own says so; classify() then calls the answer unknown and lookup() a miss, never done. The
// server's providers mark their answers the same way (lib/providers/http-answer.ts); the SDK ships on
// its own, so it carries its own copy of the marker.
const BODY_CAP_BYTES = 1024 * 1024;
const TRUNCATED_HEADER = 'x-effect-ledger-body-truncated';
const truncated = (raw: RawResponse) => raw.headers.some(([k]) => k === TRUNCATED_HEADER);

function call(
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  body: string | null,
  signal?: AbortSignal,
): Promise<RawResponse> {
  const u = new URL(url);
  const secure = u.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(
      u,
      {
        method,
        headers: body === null ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: secure ? agents.https : agents.http,
        signal,
      },
      (res) => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          pairs.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!]);
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = () =>
          resolve({ status: res.statusCode ?? 0, headers: pairs, body: new Uint8Array(Buffer.concat(chunks)) });
        res.on('data', (c: Buffer) => {
          if (res.destroyed) return;
          if (size + c.length <= BODY_CAP_BYTES) {
            chunks.push(c);
            size += c.length;
            return;
          }
          chunks.push(c.subarray(0, BODY_CAP_BYTES - size));
          size = BODY_CAP_BYTES;
          pairs.push([
            TRUNCATED_HEADER,
            `the body went past ${BODY_CAP_BYTES} bytes; the first ${BODY_CAP_BYTES} are kept`,
          ]);
          finish();
          res.destroy(); // the rest is never read
        });
        res.on('end', finish);
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

function parse(raw: RawResponse): Record<string, unknown> | null {
  try {
    const value = JSON.parse(new TextDecoder().decode(raw.body)) as unknown;
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const evidenceOf = (raw: RawResponse, body: unknown) => ({
  status: raw.status,
  body: body ?? new TextDecoder().decode(raw.body).slice(0, 2000),
});

export class SandboxProvider implements Provider {
  readonly supportsIdempotencyKey = true;
  readonly supportsReceiptLookup = true;
  /** The sandbox answers a repeated idempotency key with the original message for as long as it runs;
   *  a day is what it promises. */
  readonly idempotencyWindowSeconds: number;

  constructor(
    readonly baseUrl: string,
    readonly name = 'sandbox',
    options: { idempotencyWindowSeconds?: number } = {},
  ) {
    this.idempotencyWindowSeconds = options.idempotencyWindowSeconds ?? 86_400;
  }

  async send(request: SendRequest, signal?: AbortSignal): Promise<RawResponse> {
    const { subject, body } = request.payload as { subject?: unknown; body?: unknown };
    try {
      return await call(
        'POST',
        `${this.baseUrl}/v1/messages`,
        { 'content-type': 'application/json', 'idempotency-key': request.idempotencyKey },
        JSON.stringify({ to: request.target, subject: String(subject ?? ''), body: String(body ?? '') }),
        signal,
      );
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ECONNREFUSED')
        throw callFailure('no', `sandbox at ${this.baseUrl} refused the connection: nothing was sent`, { code });
      throw callFailure('maybe', `sandbox call ended without a response: ${(error as Error).message}`, {
        code: code ?? null,
      });
    }
  }

  classify(raw: RawResponse): Classification {
    if (truncated(raw))
      return {
        outcome: 'unknown',
        evidence: {
          status: raw.status,
          truncated: true,
          capBytes: BODY_CAP_BYTES,
          why: 'the answer was too long to read',
        },
      };
    const body = parse(raw);
    const evidence = evidenceOf(raw, body);
    if (raw.status === 200 || raw.status === 201) {
      if (body?.already_existed === true && typeof body.id === 'string')
        return { outcome: 'already_existed', reference: body.id, evidence };
      if (body?.status === 'awaiting_completion') {
        return {
          outcome: 'stuck',
          evidence: {
            ...evidence,
            why: 'the provider issued a one-shot completion token that was not redeemed: the message can never be completed',
          },
        };
      }
      if (typeof body?.id === 'string' && (body.status === 'delivered' || body.status === 'accepted'))
        return { outcome: 'done', receipt: body.id };
      return { outcome: 'unknown', evidence: { ...evidence, why: 'a success status without a receipt' } };
    }
    if (raw.status >= 400 && raw.status < 500 && raw.status !== 408 && raw.status !== 429)
      return { outcome: 'failed', evidence };
    return {
      outcome: 'unknown',
      evidence: { ...evidence, why: `status ${raw.status}: the message may or may not have been sent` },
    };
  }

  /** Only delivered, accepted and failed are states the ledger acts on. Any other (awaiting
   *  completion, a status this client does not know) and an answer past the size cap are a miss:
   *  never done, and unknown for support once the settle window has passed (C2). */
  async lookup(receipt: string, signal?: AbortSignal): Promise<LookupResult> {
    return this.read(`${this.baseUrl}/v1/messages/${encodeURIComponent(receipt)}`, signal);
  }

  /** The message sent with this idempotency key, read like a receipt (same states, same misses). */
  lookupByIdempotencyKey(idempotencyKey: string, signal?: AbortSignal): Promise<LookupResult> {
    return this.read(`${this.baseUrl}/v1/messages?idempotency_key=${encodeURIComponent(idempotencyKey)}`, signal);
  }

  private async read(url: string, signal?: AbortSignal): Promise<LookupResult> {
    const raw = await call('GET', url, {}, null, signal);
    if (raw.status === 404 || truncated(raw)) return { found: false, raw };
    if (raw.status !== 200) throw new Error(`sandbox lookup failed with status ${raw.status}`);
    const body = parse(raw);
    if (typeof body?.id !== 'string') throw new Error('sandbox lookup answered without a message id');
    const state = body.status;
    if (state === 'delivered' || state === 'accepted' || state === 'failed')
      return { found: true, receipt: body.id, state, raw };
    return { found: false, raw };
  }

  followReference(reference: string, signal?: AbortSignal): Promise<LookupResult> {
    return this.lookup(reference, signal);
  }

  /** Redeem a one-shot completion token (completion_token mode). */
  async complete(messageId: string, completionToken: string, signal?: AbortSignal): Promise<RawResponse> {
    return call(
      'POST',
      `${this.baseUrl}/v1/messages/${encodeURIComponent(messageId)}/complete`,
      { 'content-type': 'application/json' },
      JSON.stringify({ completionToken }),
      signal,
    );
  }
}
