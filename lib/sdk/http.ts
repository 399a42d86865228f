// The HTTP transport: base URL + runtime key, over the platform's fetch and nothing else. Each
// attempt has a timeout; the caller's signal stops everything but the outcome of a provider call that
// already went out. A request that got no answer (connection refused or dropped, timeout) or an
// answer that asks to come back (429, 502, 503, 504, 409 in_progress) is retried with exponential
// backoff and full jitter, never sooner than the server's Retry-After, and a POST keeps its
// Idempotency-Key across attempts (Z5). Any other error answer is thrown at once as a LedgerApiError
// with the problem document's code; no answer at all is a LedgerApiError too (`network`, `timeout`,
// `aborted`), never a bare "fetch failed".
// Connections: Node's fetch keeps them alive and reuses them by default (its global dispatcher).
import { randomUUID } from 'node:crypto';
import { LedgerApiError, type LedgerApiErrorCode } from './errors.ts';
import {
  backoffDelay,
  DEFAULT_RETRY,
  IN_PROGRESS_WAIT_MS,
  isInProgress,
  isRetryableAnswer,
  parseRetryAfter,
  sleep,
  type RetryPolicy,
} from './retry.ts';
import { encodeRawResponse, type Transport } from './types.ts';

export interface HttpTransportOptions {
  /** e.g. http://localhost:3000 (the /api/v1 prefix is added). */
  baseUrl: string;
  /** `elk_<prefix>_<secret>`, created by an admin (npm run runtime-key:create). Typed to take what
   *  an environment variable gives (string | undefined): a missing key throws at once, naming it. */
  runtimeKey: string | undefined;
  /** Per attempt, reading the answer included. Default 30 000 ms. */
  timeoutMs?: number;
  /** Aborts every request of this transport, in flight or waiting to retry (e.g. on shutdown). */
  signal?: AbortSignal;
  /** Attempts after the first. Default 4; 0 turns retrying off. */
  retries?: number;
  /** Backoff base: retry n waits a random time below min(retryMaxDelayMs, base * 2^n). Default 250 ms. */
  retryBaseDelayMs?: number;
  /** The longest single wait. A Retry-After beyond it ends the retries with the error. Default 30 000 ms. */
  retryMaxDelayMs?: number;
  /** How long to keep asking while the server says this request's earlier attempt is still running
   *  (409 in_progress), apart from `retries`. Default 130 000 ms (the server's take-over is at 120 s). */
  inProgressWaitMs?: number;
  /** Another fetch implementation (tests, proxies). Default: globalThis.fetch. */
  fetch?: typeof fetch;
}

/** One attempt's end: an answer (any status), or no answer with the reason. */
type Attempt =
  | { kind: 'answer'; status: number; body: unknown; retryAfterMs: number | null }
  | { kind: 'none'; code: 'network' | 'timeout' | 'aborted'; message: string; cause: unknown };

const problemOf = (body: unknown): Record<string, unknown> =>
  body !== null && typeof body === 'object' && typeof (body as { code?: unknown }).code === 'string'
    ? (body as Record<string, unknown>)
    : {};

/** An error answer as a LedgerApiError: the problem document's members, or `http_error` for any other body. */
function answerError(status: number, body: unknown, attempts: number): LedgerApiError {
  const { code, detail, field, type: _type, title: _title, status: _status, ...details } = problemOf(body);
  return new LedgerApiError(
    status,
    typeof code === 'string' ? code : 'http_error',
    typeof detail === 'string' ? detail : `HTTP ${status}`,
    typeof field === 'string' ? field : undefined,
    { ...details, attempts },
  );
}

/** Refuses a missing key or a base URL that is not absolute at once, not at the first request. */
function checkOptions(options: HttpTransportOptions): void {
  if (typeof options.runtimeKey !== 'string' || !options.runtimeKey)
    throw new TypeError(
      `httpTransport: runtimeKey is required (got ${options.runtimeKey === '' ? 'an empty string' : String(options.runtimeKey)}): a runtime key elk_<prefix>_<secret>, e.g. from the LEDGER_KEY environment variable`,
    );
  const url = typeof options.baseUrl === 'string' && URL.canParse(options.baseUrl) ? new URL(options.baseUrl) : null;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new TypeError(
      `httpTransport: baseUrl must be an absolute http(s) URL, got ${JSON.stringify(options.baseUrl)}`,
    );
}

export function httpTransport(options: HttpTransportOptions): Transport {
  checkOptions(options);
  const base = `${options.baseUrl.replace(/\/+$/, '')}/api/v1`;
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const policy: RetryPolicy = {
    retries: options.retries ?? DEFAULT_RETRY.retries,
    baseDelayMs: options.retryBaseDelayMs ?? DEFAULT_RETRY.baseDelayMs,
    maxDelayMs: options.retryMaxDelayMs ?? DEFAULT_RETRY.maxDelayMs,
  };
  const inProgressWaitMs = options.inProgressWaitMs ?? IN_PROGRESS_WAIT_MS;

  async function attempt(url: string, init: RequestInit, caller: AbortSignal | undefined): Promise<Attempt> {
    // One controller per attempt, ended by its timer or by the caller's signal. (AbortSignal.timeout
    // and AbortSignal.any cost more per request in Node 20, and any() keeps every composed signal
    // until the caller's is collected.) The timer does not keep the process alive, like timeout()'s.
    const controller = new AbortController();
    const timeout = { aborted: false };
    const timer = setTimeout(() => {
      timeout.aborted = true;
      controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs);
    timer.unref?.();
    const forward = () => controller.abort(caller!.reason);
    caller?.addEventListener('abort', forward, { once: true });
    try {
      const response = await doFetch(url, { ...init, signal: controller.signal });
      const text = await response.text();
      let body: unknown = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      return {
        kind: 'answer',
        status: response.status,
        body,
        retryAfterMs: parseRetryAfter(response.headers.get('retry-after')),
      };
    } catch (error) {
      if (caller?.aborted)
        return { kind: 'none', code: 'aborted', message: 'aborted by the caller', cause: caller.reason };
      if (timeout.aborted)
        return { kind: 'none', code: 'timeout', message: `no answer from ${url} within ${timeoutMs} ms`, cause: error };
      const reason = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = reason?.code ?? reason?.message ?? (error as Error).message;
      return { kind: 'none', code: 'network', message: `could not reach ${url}: ${why}`, cause: error };
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener('abort', forward);
    }
  }

  /** `finish`: the outcome of a provider call that already went out. The transport's signal does not
   *  stop it (a shutdown would otherwise turn a sent effect into an unknown one for support); each
   *  attempt's timeout and the retry count still bound it. */
  async function request<T>(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    accept: number[] = [],
    finish = false,
  ): Promise<{ status: number; body: T }> {
    const caller = finish ? undefined : options.signal;
    const headers: Record<string, string> = {
      authorization: `Bearer ${options.runtimeKey}`,
      accept: 'application/json, application/problem+json',
      'user-agent': 'effect-ledger-sdk',
    };
    // One key per logical request, the same on every attempt: the server answers a repeat with the
    // first answer instead of doing the work twice.
    if (method === 'POST') {
      headers['content-type'] = 'application/json';
      headers['idempotency-key'] = randomUUID();
    }
    const init: RequestInit = { method, headers, body: method === 'POST' ? JSON.stringify(body ?? {}) : undefined };
    const url = `${base}${path}`;
    let inProgressSince: number | null = null;
    for (let attempts = 1; ; attempts++) {
      if (caller?.aborted)
        throw new LedgerApiError(
          0,
          'aborted',
          'aborted by the caller',
          undefined,
          { attempts },
          { cause: caller.reason },
        );
      const result = await attempt(url, init, caller);
      let error: LedgerApiError;
      let retryAfterMs: number | null = null;
      if (result.kind === 'answer') {
        const retryable = isRetryableAnswer(result.status, result.body);
        if ((result.status >= 200 && result.status < 300) || (accept.includes(result.status) && !retryable))
          return { status: result.status, body: result.body as T };
        error = answerError(result.status, result.body, attempts);
        if (!retryable) throw error;
        retryAfterMs = result.retryAfterMs;
      } else {
        const code: LedgerApiErrorCode = result.code;
        error = new LedgerApiError(0, code, result.message, undefined, { attempts }, { cause: result.cause });
        if (code === 'aborted') throw error;
      }
      const waiting = result.kind === 'answer' && isInProgress(result.status, result.body);
      if (waiting) inProgressSince ??= Date.now();
      const keepWaiting = waiting && Date.now() - inProgressSince! < inProgressWaitMs;
      if (attempts > policy.retries && !keepWaiting) throw error;
      // Never sooner than the server asked; a wait longer than allowed goes back to the caller instead.
      if (retryAfterMs !== null && retryAfterMs > policy.maxDelayMs) throw error;
      try {
        const backoff = backoffDelay(Math.min(attempts - 1, policy.retries), policy);
        await sleep(retryAfterMs ?? (keepWaiting ? Math.min(backoff, 2_000) : backoff), caller);
      } catch (reason) {
        throw new LedgerApiError(0, 'aborted', 'aborted by the caller', undefined, { attempts }, { cause: reason });
      }
    }
  }

  const run = (runId: string) => `/runs/${encodeURIComponent(runId)}`;
  return {
    createRun: async (body) => (await request<never>('POST', '/runs', body)).body,
    submitPlan: async (runId, items) => (await request<never>('POST', `${run(runId)}/plan`, { items })).body,
    readRun: async (runId) => (await request<never>('GET', run(runId))).body,
    replay: async (runId) => {
      const r = await request<Record<string, unknown>>('POST', `${run(runId)}/replay`, {}, [409]);
      return { ...r.body, status: r.status } as never;
    },
    claim: async (body) => (await request<never>('POST', '/effects/claim', body)).body,
    recordResponse: async (attemptId, raw) =>
      (
        await request<never>(
          'POST',
          `/attempts/${encodeURIComponent(attemptId)}/response`,
          encodeRawResponse(raw),
          [],
          true,
        )
      ).body,
    reportOutcome: async (body) => (await request<never>('POST', '/effects/outcome', body, [], true)).body,
    reportDeletion: async (body) => (await request<never>('POST', '/effects/deletion', body)).body,
    readEffect: async (key) => (await request<never>('GET', `/effects/${encodeURIComponent(key)}`)).body,
  };
}
