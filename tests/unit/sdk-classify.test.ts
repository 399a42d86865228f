import { describe, expect, it } from 'vitest';
import { classifyHttp } from '@/lib/sdk/index.ts';
import { SandboxProvider } from '@/lib/sdk/sandbox.ts';
import { canonicalJson, requestHash } from '@/lib/api/idempotency.ts';
import { successorId, uuidV5 } from '@/lib/ledger/commands/revoke-by-deletion.ts';
import { problem, problemFrom, problemHeaders } from '@/lib/api/problem.ts';
import { LedgerError } from '@/lib/core/errors.ts';

const raw = (status: number, body: unknown) => ({
  status,
  headers: [] as [string, string][],
  body: new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)),
});

describe('SDK classification', () => {
  it('S2, S3, S4: 2xx with an id is done; a definitive 4xx is failed; 408, 409, 429, 5xx and 2xx without a receipt are unknown', () => {
    expect(classifyHttp(raw(201, { id: 'm1' }))).toEqual({ outcome: 'done', receipt: 'm1' });
    expect(classifyHttp(raw(200, { messageId: 'm2' }))).toEqual({ outcome: 'done', receipt: 'm2' });
    expect(classifyHttp(raw(422, { error: 'bad' })).outcome).toBe('failed');
    // 409: providers answer it while a request with the same idempotency key is still running, which
    // may yet succeed.
    for (const s of [408, 409, 429, 500, 502, 503]) expect(classifyHttp(raw(s, {})).outcome).toBe('unknown');
    expect(classifyHttp(raw(200, 'OK')).outcome).toBe('unknown');
    expect(classifyHttp(raw(202, {})).outcome).toBe('unknown');
  });

  it('R3, S6: the sandbox classifier turns already_existed into a pointer and an unredeemed completion token into stuck', () => {
    const p = new SandboxProvider('http://unused');
    expect(p.classify(raw(200, { already_existed: true, id: 'msg_prior' }))).toMatchObject({
      outcome: 'already_existed',
      reference: 'msg_prior',
    });
    expect(p.classify(raw(201, { id: 'msg_t', status: 'awaiting_completion', completionToken: 'ct' })).outcome).toBe(
      'stuck',
    );
    expect(p.classify(raw(201, { id: 'msg_ok', status: 'delivered' }))).toEqual({ outcome: 'done', receipt: 'msg_ok' });
    expect(p.classify(raw(422, { error: {} })).outcome).toBe('failed');
    expect(p.classify(raw(502, {})).outcome).toBe('unknown');
  });
});

describe('API helpers', () => {
  it('Z5: the request hash ignores key order but not content or path', () => {
    expect(canonicalJson({ b: 1, a: [{ y: 2, x: 1 }] })).toBe('{"a":[{"x":1,"y":2}],"b":1}');
    expect(requestHash('POST', '/p', { a: 1, b: 2 })).toBe(requestHash('POST', '/p', { b: 2, a: 1 }));
    expect(requestHash('POST', '/p', { a: 1 })).not.toBe(requestHash('POST', '/q', { a: 1 }));
    expect(requestHash('POST', '/p', { a: 1 })).not.toBe(requestHash('POST', '/p', { a: 2 }));
  });

  it('V2: the successor id is a UUIDv5 of the deleted id and the deletion time: deterministic, and a chain of deletions walks on', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
    const a = successorId('post_1', '2026-11-30T10:00:00Z');
    expect(successorId('post_1', new Date('2026-11-30T10:00:00.000Z'))).toBe(a);
    expect(successorId('post_1', '2026-11-30T10:00:01Z')).not.toBe(a);
    const b = successorId(a, '2026-12-01T00:00:00Z');
    expect(b).not.toBe(a);
    expect(successorId(a, '2026-12-01T00:00:00Z')).toBe(b);
  });

  it('errors map to HTTP in one place, as RFC 9457 problem documents', () => {
    const codes = [
      'validation',
      'unauthenticated',
      'forbidden',
      'not_found',
      'conflict',
      'invalid_transition',
    ] as const;
    expect(codes.map((c) => problemFrom(new LedgerError(c, 'x')).status)).toEqual([422, 401, 403, 404, 409, 409]);
    const p = problemFrom(new LedgerError('validation', 'target: not an email', { field: 'target', index: 3 }));
    expect(p).toEqual({
      type: '/api/v1/docs#problem-validation',
      title: 'Invalid input',
      status: 422,
      detail: 'target: not an email',
      code: 'validation',
      field: 'target',
      index: 3,
    });
    // A lost database is 503 with Retry-After, never a 500; an unknown error shows no internals.
    const down = problemFrom(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    expect(down).toMatchObject({ status: 503, code: 'unavailable' });
    expect(problemHeaders(down)).toMatchObject({ 'content-type': 'application/problem+json', 'retry-after': '2' });
    const bug = problemFrom(new TypeError('secret internals'));
    expect(bug).toMatchObject({ status: 500, code: 'internal' });
    expect(JSON.stringify(bug)).not.toContain('secret internals');
    expect(problem('rate_limited', 'slow down').status).toBe(429);
  });
});
