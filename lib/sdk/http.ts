// The HTTP transport: base URL + runtime key. Every POST carries a fresh Idempotency-Key, and a
// request that failed without an answer (connection lost) is retried with the same key (Z5), so a
// retry can never claim or report twice.
import { randomUUID } from 'node:crypto';
import { LedgerApiError } from './errors.ts';
import { encodeRawResponse, type Transport } from './types.ts';

export interface HttpTransportOptions {
  /** e.g. http://localhost:3000 (the /api/v1 prefix is added). */
  baseUrl: string;
  runtimeKey: string;
  /** Retries of a request that got no answer. Default 3. */
  retries?: number;
  fetch?: typeof fetch;
}

export function httpTransport(options: HttpTransportOptions): Transport {
  const base = `${options.baseUrl.replace(/\/+$/, '')}/api/v1`;
  const doFetch = options.fetch ?? fetch;
  const retries = options.retries ?? 3;

  async function request<T>(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    accept: number[] = [],
  ): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${options.runtimeKey}`,
      accept: 'application/json',
    };
    if (method === 'POST') {
      headers['content-type'] = 'application/json';
      headers['idempotency-key'] = randomUUID();
    }
    let lastError: unknown;
    for (let attempt = 0; attempt <= retries; attempt++) {
      let response: Response;
      try {
        response = await doFetch(`${base}${path}`, {
          method,
          headers,
          body: method === 'POST' ? JSON.stringify(body ?? {}) : undefined,
        });
      } catch (error) {
        lastError = error;
        continue;
      }
      const text = await response.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = null;
      }
      // Error answers are RFC 9457 problem documents: { type, title, status, detail, code, field?, ... }.
      const {
        code,
        detail,
        field,
        type: _type,
        title: _title,
        status: _status,
        ...details
      } = (response.ok ? {} : (json ?? {})) as Record<string, unknown>;
      // Our own earlier attempt is still running on the server (a lost answer, retried): wait for it.
      if (response.status === 409 && details.idempotency === 'in_progress' && attempt < retries) {
        lastError = new LedgerApiError(409, 'conflict', String(detail ?? 'in progress'), undefined, details);
        await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
        continue;
      }
      if (response.ok || accept.includes(response.status)) return { status: response.status, body: json as T };
      throw new LedgerApiError(
        response.status,
        typeof code === 'string' ? code : 'http_error',
        typeof detail === 'string' ? detail : `HTTP ${response.status}`,
        typeof field === 'string' ? field : undefined,
        details,
      );
    }
    throw lastError;
  }

  return {
    createRun: async (body) => (await request<never>('POST', '/runs', body)).body,
    submitPlan: async (runId, items) =>
      (await request<never>('POST', `/runs/${encodeURIComponent(runId)}/plan`, { items })).body,
    readRun: async (runId) => (await request<never>('GET', `/runs/${encodeURIComponent(runId)}`)).body,
    replay: async (runId) => {
      const r = await request<Record<string, unknown>>('POST', `/runs/${encodeURIComponent(runId)}/replay`, {}, [409]);
      return { status: r.status, ...r.body } as never;
    },
    claim: async (body) => (await request<never>('POST', '/effects/claim', body)).body,
    recordResponse: async (attemptId, raw) =>
      (await request<never>('POST', `/attempts/${encodeURIComponent(attemptId)}/response`, encodeRawResponse(raw)))
        .body,
    reportOutcome: async (body) => (await request<never>('POST', '/effects/outcome', body)).body,
    reportDeletion: async (body) => (await request<never>('POST', '/effects/deletion', body)).body,
  };
}
