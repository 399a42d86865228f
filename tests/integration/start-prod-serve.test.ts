// Issue 17: `npm run start:prod` serving for real (the production build; built first when there is
// none): the probes and metrics over HTTP, a request id on every answer and in the JSON access log,
// X-Forwarded-For ignored from a peer that is not a trusted proxy (the audit entry keeps the real
// peer), the agent API served by the front itself (headers, 404/405 problems, the body limit on a
// chunked upload), and SIGTERM ending it with exit 0, no process left and the port free.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '@/lib/api/request-body.ts';
import { freePort } from '@/lib/db/embedded.ts';
import { createRuntimeKey } from '@/lib/runtime-keys/index.ts';
import { nextCli } from '@/scripts/support/processes.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun } from '../helpers/factories.ts';
import {
  alive,
  descendants,
  listening,
  ROOT,
  scriptEnv,
  startScript,
  TSX,
  type Started,
} from '../helpers/processes.ts';

let server: Started | undefined;
afterAll(() => {
  if (server?.child.exitCode === null) {
    for (const pid of descendants(server.child.pid!)) process.kill(pid, 'SIGKILL');
    server.child.kill('SIGKILL');
  }
});

describe('npm run start:prod', () => {
  it(
    'serves the probes and the API behind its front, then stops cleanly on SIGTERM',
    { timeout: 900_000 },
    async () => {
      if (!existsSync(path.join(ROOT, '.next/BUILD_ID'))) {
        const build = spawnSync(process.execPath, [nextCli(), 'build'], { cwd: ROOT, stdio: 'inherit' });
        expect(build.status).toBe(0);
      }
      const t = await createTestDatabase({ poolSize: 2 });
      const port = await freePort();
      server = startScript(
        ['--import', TSX, 'scripts/start-prod.ts'],
        scriptEnv({
          DATABASE_URL: t.appUrl,
          NEXTAUTH_SECRET: 'y'.repeat(32),
          NEXTAUTH_URL: `http://127.0.0.1:${port}`,
          PORT: String(port),
          LISTEN_HOST: '127.0.0.1',
          SHUTDOWN_GRACE_SECONDS: '60',
        }),
      );
      await server.waitFor('"msg":"listening"');
      const base = `http://127.0.0.1:${port}`;

      const health = await fetch(`${base}/healthz`, { headers: { 'x-request-id': 'probe-1' } });
      expect(health.status).toBe(200);
      expect(health.headers.get('x-request-id')).toBe('probe-1');
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect((await ready.json()).checks).toEqual({ database: 'ok', migrations: 'ok' });
      expect(ready.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

      // A client-chosen X-Forwarded-For from an untrusted peer is ignored: the audit entry has the peer.
      const refused = await fetch(`${base}/api/v1/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.66', 'x-request-id': 'spoof-1' },
        body: JSON.stringify({ workflow: 'wf', triggerId: 'evt' }),
      });
      expect(refused.status).toBe(401);
      const audit = await t.owner<{ ip: string | null }>(`SELECT ip FROM audit_entry WHERE request_id = 'spoof-1'`);
      expect(audit.rows).toEqual([{ ip: '127.0.0.1' }]);

      // The front serves the agent API from its route handlers: a claim works end to end, every answer
      // has the console's security headers, and what no route handles is a problem document.
      const key = await createRuntimeKey(
        { db: t.db, actor: { kind: 'system', id: 'test', label: 'test' } },
        { name: 'front', workflows: ['wf'] },
      );
      const auth = { authorization: `Bearer ${key.token}`, 'content-type': 'application/json' };
      const created = await fetch(`${base}/api/v1/runs`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ workflow: 'wf', triggerId: 'evt-front' }),
      });
      expect(created.status).toBe(201);
      expect(created.headers.get('x-frame-options')).toBe('DENY');
      expect(created.headers.get('x-content-type-options')).toBe('nosniff');
      // A replayed claim (its key is held) is answered by one statement; its log line names the caller.
      const held = await makeEffect(t.db, 'done', { runId: (await makeRun(t.db, 'wf')).runId });
      const replayed = await fetch(`${base}/api/v1/effects/claim`, {
        method: 'POST',
        headers: { ...auth, 'idempotency-key': 'replay-1', 'x-request-id': 'replay-1' },
        body: JSON.stringify(held.input),
      });
      expect(replayed.status).toBe(200);
      expect(await replayed.json()).toMatchObject({ claimed: false, state: 'done' });
      const nowhere = await fetch(`${base}/api/v1/nowhere`, { headers: { 'x-request-id': 'nowhere-1' } });
      expect(nowhere.status).toBe(404);
      expect(nowhere.headers.get('content-type')).toBe('application/problem+json');
      expect(await nowhere.json()).toMatchObject({ code: 'not_found', status: 404 });
      const wrongMethod = await fetch(`${base}/api/v1/effects/claim`, { method: 'DELETE' });
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get('allow')).toBe('POST, OPTIONS');
      // The console's pages: a prerendered shell for anyone, and its view (served by the front, as the
      // agent API is) only with a session: 401 naming why, with the console's headers.
      const shell = await fetch(`${base}/runs`);
      expect(shell.status).toBe(200);
      expect(await shell.text()).toContain('id="main"');
      const view = await fetch(`${base}/api/console/views/runs`, { headers: { 'x-request-id': 'view-1' } });
      expect(view.status).toBe(401);
      expect(view.headers.get('x-frame-options')).toBe('DENY');
      expect(await view.json()).toMatchObject({ code: 'unauthenticated', reason: 'no_session' });
      const noView = await fetch(`${base}/api/console/views/nowhere`);
      expect(noView.status).toBe(404);
      expect(await noView.json()).toMatchObject({
        code: 'not_found',
        detail: 'no console view at /api/console/views/nowhere',
      });
      // A chunked body past the limit (no Content-Length to refuse it by) is cut off at the limit: 413.
      let sent = 0;
      const endless = new ReadableStream<Uint8Array>({
        pull(controller) {
          sent += 1 << 20;
          if (sent > MAX_BODY_BYTES + (4 << 20)) controller.close();
          else controller.enqueue(new Uint8Array(1 << 20).fill(32));
        },
      });
      const huge = await fetch(`${base}/api/v1/runs`, {
        method: 'POST',
        headers: auth,
        body: endless,
        duplex: 'half',
      } as RequestInit);
      expect(huge.status).toBe(413);
      expect(await huge.json()).toMatchObject({ code: 'payload_too_large', field: 'body' });
      // The bytes the front read are checked as the handler checks a stream: not UTF-8, too deep.
      const latin1 = await fetch(`${base}/api/v1/runs`, {
        method: 'POST',
        headers: auth,
        body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
      });
      expect(latin1.status).toBe(422);
      expect(await latin1.json()).toMatchObject({ code: 'validation', field: 'body' });
      const deep = await fetch(`${base}/api/v1/runs`, { method: 'POST', headers: auth, body: '['.repeat(40_000) });
      expect(deep.status).toBe(413);
      const runs = await t.owner<{ n: string }>(`SELECT count(*) AS n FROM run WHERE workflow = 'wf'`);
      expect(runs.rows).toEqual([{ n: '2' }]); // the one created above and the replayed claim's

      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toMatch(/^ledger_http_request_duration_seconds_count\{operation="[a-z.]+",status="401"\} 1$/m);
      expect(metrics).toMatch(/^ledger_db_pool_waiting \d+$/m);

      // JSON access lines with the request id, and the API's own line with the actor.
      const lines = server
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.find((l) => l.requestId === 'probe-1' && l.msg === 'request')).toMatchObject({
        component: 'web',
        path: '/healthz',
        status: 200,
      });
      expect(lines.find((l) => l.requestId === 'spoof-1' && l.msg === 'api answer')).toMatchObject({
        component: 'api',
        actor: 'anonymous',
        ip: '127.0.0.1',
        status: 401,
      });

      // One line per request: an API answer's own line stands for the access line; what no route
      // answered still gets the front's.
      expect(lines.filter((l) => l.requestId === 'spoof-1').map((l) => l.msg)).toEqual(['api answer']);
      expect(lines.filter((l) => l.requestId === 'nowhere-1')).toMatchObject([{ msg: 'request', status: 404 }]);
      expect(lines.find((l) => l.requestId === 'replay-1' && l.msg === 'api answer')).toMatchObject({
        actor: `runtime:${key.id}`,
        status: 200,
      });

      const family = descendants(server.child.pid!);
      expect(family.length).toBeGreaterThanOrEqual(1);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      expect(server.output()).toMatch(/"component":"start:prod".*"msg":"stopped"/);
      expect(family.filter(alive)).toEqual([]);
      expect(await listening(port)).toBe(false);
    },
  );
});
