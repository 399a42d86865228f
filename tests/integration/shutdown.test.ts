// Issue 17: SIGTERM to `npm start` stops the console, the worker, the sandbox and the embedded
// PostgreSQL, exits 0 and leaves no process behind and no port open (before, the Next.js server
// stayed alive as an orphan). Run with --dev (`npm run dev`: the same supervisor, no build needed;
// `next dev` also starts a child server of its own, which must go too).
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '@/lib/db/embedded.ts';
import { alive, descendants, listening, scriptEnv, startScript, TSX, type Started } from '../helpers/processes.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'ledger-shutdown-'));
chmodSync(dir, 0o755); // PostgreSQL's initdb may run as another user (as in tests/helpers/global-setup.ts)
let demo: Started | undefined;
afterAll(async () => {
  if (demo?.child.exitCode === null) {
    for (const pid of descendants(demo.child.pid!)) process.kill(pid, 'SIGKILL');
    demo.child.kill('SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Polls until check() holds; a generous deadline, since the machine may be loaded. */
async function eventually(check: () => Promise<boolean>, what: string, ms = 180_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('graceful shutdown', () => {
  it('SIGTERM to npm start: exit 0, every descendant process gone, every port free', { timeout: 600_000 }, async () => {
    const ports = { PORT: await freePort(), SANDBOX_PORT: await freePort(), EMBEDDED_POSTGRES_PORT: await freePort() };
    demo = startScript(
      ['--import', TSX, 'scripts/start.ts', '--dev'],
      scriptEnv({
        NODE_ENV: 'development',
        LEDGER_DATA_DIR: path.join(dir, 'data'),
        SHUTDOWN_GRACE_SECONDS: '60',
        PORT: String(ports.PORT),
        SANDBOX_PORT: String(ports.SANDBOX_PORT),
        EMBEDDED_POSTGRES_PORT: String(ports.EMBEDDED_POSTGRES_PORT),
      }),
    );
    await demo.waitFor('Effect Ledger console:');
    await demo.waitFor(/"component":"worker".*"msg":"worker ready: /);
    await eventually(() => listening(ports.PORT), 'the console to listen');
    for (const port of Object.values(ports)) expect(await listening(port)).toBe(true);
    const family = descendants(demo.child.pid!);
    // The console (and next dev's own server process), the worker and PostgreSQL with its backends.
    expect(family.length).toBeGreaterThanOrEqual(4);

    demo.child.kill('SIGTERM');
    expect(await demo.exited).toBe(0);
    expect(demo.output()).toContain('[start] stopped');
    expect(demo.output()).not.toContain('killed after the grace period');
    expect(family.filter(alive)).toEqual([]);
    for (const port of Object.values(ports)) expect(await listening(port)).toBe(false);
  });
});
