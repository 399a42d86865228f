// Logs a shipper can read: every line `npm run start:prod` (after a build) and `npm run worker` write
// to stdout is one JSON object, also when things fail: an agent API request while the database is
// gone (Prisma's error, with its stack inside the object), a console sign-in then, a page Next
// renders, a library's console.error and a process warning (pg-boss's own lines are warnings and
// error events), and the stops. Before, Prisma's stack traces and pg-boss's lines were plain text.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '@/lib/db/embedded.ts';
import { nextCli } from '@/scripts/support/processes.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.ts';
import { descendants, ROOT, scriptEnv, startScript, TSX, type Started } from '../helpers/processes.ts';
import { makeKey } from './api-support.ts';

const started: Started[] = [];
let proxy: FaultProxy | undefined;
afterAll(async () => {
  for (const s of started.filter((x) => x.child.exitCode === null)) {
    for (const pid of descendants(s.child.pid!)) process.kill(pid, 'SIGKILL');
    s.child.kill('SIGKILL');
  }
  await proxy?.close();
});

/** Starts a script with npm as the docs do, keeping stdout apart from stderr. */
function npmRun(script: string, env: NodeJS.ProcessEnv) {
  const s = startScript(['run', '--silent', script], { ...env, npm_config_update_notifier: 'false' }, ROOT, 'npm');
  let stdout = '';
  s.child.stdout!.on('data', (c: Buffer) => (stdout += c));
  started.push(s);
  return { ...s, stdout: () => stdout };
}

type Line = { level: string; msg: string; component?: string; err?: { stack?: string; message?: string } };

function everyLineJson(stdout: string): Line[] {
  const lines = stdout.split('\n').filter((l) => l !== '');
  const notJson = lines.filter((l) => {
    try {
      return typeof JSON.parse(l) !== 'object';
    } catch {
      return true;
    }
  });
  expect(notJson).toEqual([]);
  return lines.map((l) => JSON.parse(l) as Line);
}

describe('every stdout line is one JSON object', () => {
  it("a library's console lines, a process warning and an uncaught exception, routed through the logger", async () => {
    const program = `
      import { routeConsoleToLog } from './lib/ops/console-as-log.ts';
      routeConsoleToLog('probe');
      console.log('two\\nlines', { a: 1 });
      console.error('[pg-boss] failed', new Error('boom'));
      console.warn('\\u001b[33m⚠\\u001b[39m colored');
      process.emitWarning('a library warning', 'DeprecationWarning', 'DEP0');
      setTimeout(() => { throw new Error('nobody caught me'); }, 10);`;
    const ran = spawnSync(process.execPath, ['--import', TSX, '--input-type=module', '-e', program], {
      cwd: ROOT,
      env: scriptEnv({}),
      encoding: 'utf8',
    });
    expect(ran.status).toBe(1);
    expect(ran.stderr).toBe('');
    const lines = everyLineJson(ran.stdout);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['info', 'two\nlines { a: 1 }'],
      ['error', '[pg-boss] failed'],
      ['warn', '⚠ colored'],
      ['warn', 'a library warning'],
      ['fatal', 'uncaught exception: nobody caught me'],
    ]);
    expect(lines[1]!.err?.stack).toContain('Error: boom\n    at ');
  });

  it(
    'npm run start:prod: requests, a database outage, a sign-in, warnings and the stop',
    { timeout: 900_000 },
    async () => {
      if (!existsSync(path.join(ROOT, '.next/BUILD_ID'))) {
        const build = spawnSync(process.execPath, [nextCli(), 'build'], { cwd: ROOT, stdio: 'inherit' });
        expect(build.status).toBe(0);
      }
      const t = await createTestDatabase({ poolSize: 1 });
      const { token } = await makeKey(t.db);
      const server = new URL(inject('ownerUrl'));
      proxy = await startFaultProxy({ host: server.hostname, port: Number(server.port) });
      const viaProxy = new URL(t.appUrl);
      viaProxy.port = String(proxy.port);
      const port = await freePort();
      const web = npmRun(
        'start:prod',
        scriptEnv({
          DATABASE_URL: viaProxy.toString(),
          NEXTAUTH_SECRET: 'l'.repeat(32),
          NEXTAUTH_URL: `http://127.0.0.1:${port}`,
          PORT: String(port),
          LISTEN_HOST: '127.0.0.1',
        }),
      );
      await web.waitFor('"msg":"listening"');
      const base = `http://127.0.0.1:${port}`;
      expect((await fetch(`${base}/sign-in`)).status).toBe(200);
      const auth = { authorization: `Bearer ${token}` };
      expect((await fetch(`${base}/api/v1/effects/no-such-key`, { headers: auth })).status).toBe(404);

      proxy.set('down');
      const failing = await fetch(`${base}/api/v1/effects/no-such-key`, { headers: auth });
      expect(failing.status).toBe(503);
      const csrfAnswer = await fetch(`${base}/api/auth/csrf`);
      const csrf = (await csrfAnswer.json()) as { csrfToken: string };
      const cookie = csrfAnswer.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const signIn = await fetch(`${base}/api/auth/callback/credentials`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ email: 'a@example.com', password: 'x', csrfToken: csrf.csrfToken, json: 'true' }),
      });
      expect(signIn.status).toBe(503); // unavailable, not a wrong password
      expect((await fetch(`${base}/readyz`)).status).toBe(503);
      proxy.set('open');

      web.child.kill('SIGTERM');
      expect(await web.exited).toBe(0);
      const lines = everyLineJson(web.stdout());
      const errors = lines.filter((l) => l.level === 'error' || l.level === 'warn');
      expect(errors.length).toBeGreaterThan(0);
      // The database error is one object with its stack inside.
      expect(errors.some((l) => (l.err?.stack ?? '').includes('\n    at '))).toBe(true);
      expect(lines.some((l) => l.component === 'start:prod' && l.msg === 'stopped')).toBe(true);
    },
  );

  it('npm run worker: its lines, pg-boss', { timeout: 300_000 }, async () => {
    const t = await createTestDatabase({ poolSize: 1 });
    const worker = npmRun('worker', scriptEnv({ DATABASE_URL: t.appUrl, MIGRATION_DATABASE_URL: t.ownerUrl }));
    await worker.waitFor('worker ready');
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    const lines = everyLineJson(worker.stdout());
    expect(lines.some((l) => l.msg.startsWith('worker ready'))).toBe(true);
    // A worker that cannot start: its fatal line is an object with the error's stack.
    const broken = npmRun('worker', scriptEnv({ DATABASE_URL: 'postgres://nobody:x@127.0.0.1:1/none' }));
    expect(await broken.exited).toBe(1);
    const fatal = everyLineJson(broken.stdout()).filter((l) => l.level === 'fatal');
    expect(fatal).toHaveLength(1);
    expect(fatal[0]!.err?.stack).toBeTruthy();
  });
});
