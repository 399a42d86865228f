// Stops as process managers send them: SIGTERM to the npm process of `npm run start:prod` and of
// `npm run worker`, started exactly as docs/DEPLOYMENT.md starts them. The package scripts exec node,
// so npm's forwarded signal reaches the process itself (before, sh swallowed it and the node
// children kept running, still listening). Under keep-alive clients hammering it, the web process
// drains (scripts/support/http-drain.ts): every answer after the signal says `Connection: close`,
// and the whole tree is gone within 2 s, port closed. The worker hands its work back and exits 0.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Agent, request } from 'node:http';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '@/lib/db/embedded.ts';
import { nextCli } from '@/scripts/support/processes.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { alive, descendants, listening, ROOT, scriptEnv, startScript, type Started } from '../helpers/processes.ts';

const started: Started[] = [];
afterAll(() => {
  for (const s of started.filter((x) => x.child.exitCode === null)) {
    for (const pid of descendants(s.child.pid!)) process.kill(pid, 'SIGKILL');
    s.child.kill('SIGKILL');
  }
});

const npmRun = (script: string, env: NodeJS.ProcessEnv) => {
  const s = startScript(['run', '--silent', script], { ...env, npm_config_update_notifier: 'false' }, ROOT, 'npm');
  started.push(s);
  return s;
};

interface Answer {
  at: number;
  status: number;
  connection: string | undefined;
}

/** One keep-alive client sending GETs one after the other until told to stop or refused. */
async function hammer(port: number, agent: Agent, until: () => boolean, answers: Answer[]): Promise<void> {
  while (!until()) {
    const answer = await new Promise<Answer | undefined>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/healthz', agent }, (res) => {
        res.resume();
        res.once('end', () =>
          resolve({ at: performance.now(), status: res.statusCode!, connection: res.headers.connection }),
        );
      });
      req.once('error', () => resolve(undefined)); // refused or reset once the server is gone
      req.end();
    });
    if (!answer) return;
    answers.push(answer);
  }
}

describe('SIGTERM to npm, as a process manager sends it', () => {
  it(
    'npm run start:prod under keep-alive load: drains with Connection: close, whole tree gone within 2 s',
    { timeout: 900_000 },
    async () => {
      if (!existsSync(path.join(ROOT, '.next/BUILD_ID'))) {
        const build = spawnSync(process.execPath, [nextCli(), 'build'], { cwd: ROOT, stdio: 'inherit' });
        expect(build.status).toBe(0);
      }
      const t = await createTestDatabase({ poolSize: 1 });
      const port = await freePort();
      const web = npmRun(
        'start:prod',
        scriptEnv({
          DATABASE_URL: t.appUrl,
          NEXTAUTH_SECRET: 'z'.repeat(32),
          NEXTAUTH_URL: `http://127.0.0.1:${port}`,
          PORT: String(port),
          LISTEN_HOST: '127.0.0.1',
          SHUTDOWN_GRACE_SECONDS: '25',
        }),
      );
      await web.waitFor('"msg":"listening"');
      const family = descendants(web.child.pid!);
      expect(family.length).toBeGreaterThanOrEqual(2); // start-prod and the web server

      const agent = new Agent({ keepAlive: true, maxSockets: 8 });
      const answers: Answer[] = [];
      let stopClients = false;
      const clients = Array.from({ length: 8 }, () => hammer(port, agent, () => stopClients, answers));
      // Load first: every keep-alive socket busy or idle in the pool when the signal comes.
      while (answers.length < 200) await new Promise((r) => setTimeout(r, 20));

      const signalled = performance.now();
      web.child.kill('SIGTERM');
      const code = await web.exited;
      const tookMs = performance.now() - signalled;
      stopClients = true;
      await Promise.all(clients);
      agent.destroy();

      expect(code).toBe(0);
      expect(tookMs).toBeLessThan(2_000);
      expect(family.filter(alive)).toEqual([]);
      expect(await listening(port)).toBe(false);
      expect(web.output()).toContain('"msg":"stopped"');
      expect(web.output()).not.toContain('killed after the grace period');
      // From the first answer that says Connection: close (the drain has begun), each connection gets
      // at most its in-flight answer, and that one closes it.
      const firstClose = answers.find((a) => a.connection === 'close');
      const afterDrain = firstClose ? answers.filter((a) => a.at >= firstClose.at) : [];
      expect(afterDrain.length).toBeLessThanOrEqual(16);
      expect(afterDrain.filter((a) => a.connection !== 'close' && a.at - firstClose!.at > 50)).toEqual([]);
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    },
  );

  it('npm run worker: SIGTERM to npm stops the worker, exit 0, nothing left', { timeout: 300_000 }, async () => {
    const t = await createTestDatabase({ poolSize: 1 });
    const worker = npmRun(
      'worker',
      scriptEnv({ DATABASE_URL: t.appUrl, MIGRATION_DATABASE_URL: t.ownerUrl, SHUTDOWN_GRACE_SECONDS: '10' }),
    );
    await worker.waitFor('worker ready');
    const family = descendants(worker.child.pid!);
    expect(family.length).toBeGreaterThanOrEqual(1);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.output()).toContain('"msg":"stopped"');
    expect(family.filter(alive)).toEqual([]);
  });
});
