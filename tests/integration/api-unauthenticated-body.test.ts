// The API front read a request's whole body (up to the 64 MiB limit) before the route handler checked
// the caller's key, so anyone could make a web process buffer 64 MiB per request and be told 401 only
// afterwards. A body sent with no bearer credential is now answered 401 before it is read: the answer
// is the handler's own (the same problem document, header and audit as for a read body).
import { request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchApi } from '@/scripts/support/api-router.ts';
import { startApiServer } from '@/scripts/bench/sdk-http-server.ts';
import { createTestDatabase } from '../helpers/db.ts';

let api: { url: string; stop(): Promise<void> };
beforeAll(async () => {
  const t = await createTestDatabase({ poolSize: 4 });
  api = await startApiServer(t.appUrl, 2);
});
afterAll(async () => {
  await api?.stop();
});

/** Starts a POST whose body never ends, and resolves with the answer given while it is still open. */
function postEndless(path: string, headers: Record<string, string>): Promise<{ res: IncomingMessage; body: string }> {
  const { hostname, port } = new URL(api.url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method: 'POST', headers });
    req.on('error', () => undefined); // the server closes the connection after answering: expected
    // A bound on the wait, not a synchronization: a front that reads the body first never answers.
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error('no answer while the body was still being sent'));
    }, 20_000);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        resolve({ res, body });
      });
    });
    req.write(`{"workflow": "wf", "triggerId": "t-1", "pad": "${'x'.repeat(1 << 20)}`);
  });
}

describe('a body sent without a credential', () => {
  it('Z5: is answered 401 before it is read, with the problem document the handler gives for a read body', async () => {
    const handler = await dispatchApi(
      new Request('http://api.invalid/api/v1/runs', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'wf', triggerId: 't-1' }),
      }),
    );
    expect(handler.status).toBe(401);
    const expected = await handler.json();

    for (const authorization of [undefined, 'Basic YWdlbnQ6c2VjcmV0', 'Bearer']) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (authorization) headers.authorization = authorization;
      const { res, body } = await postEndless('/api/v1/runs', headers);
      expect(res.statusCode, authorization).toBe(401);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(res.headers['www-authenticate']).toBe(handler.headers.get('www-authenticate'));
      expect(res.headers.connection).toBe('close');
      expect(JSON.parse(body)).toEqual(expected);
    }
  });
});
