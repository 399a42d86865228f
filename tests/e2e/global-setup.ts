// Self-contained browser-test environment: an embedded PostgreSQL on a free port, migrated, with
// the app login role; demo data written through the lib commands; then `next build` (only when the
// sources are newer than the last build) and `next start` on a free port as the app role.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '@/lib/db/embedded.ts';
import { startSandbox } from '@/lib/providers/sandbox/server.ts';
import { startThrowawayDatabase } from '@/lib/db/scratch.ts';
import { nextBuildIsFresh } from '@/scripts/support/next-build.ts';

// One state file per checkout: two checkouts running the browser tests at once must not read
// each other's server address or secret.
const checkoutTag = createHash('sha256').update(process.cwd()).digest('hex').slice(0, 12);
export const STATE_FILE = path.join(tmpdir(), `effect-ledger-e2e-state-${checkoutTag}.json`);

export async function waitForHttp(url: string, child: ChildProcess, timeoutMs = 120_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`next start exited with ${child.exitCode}`);
    try {
      const res = await fetch(url, { redirect: 'manual' });
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

export default async function globalSetup() {
  const database = await startThrowawayDatabase({ name: 'console_e2e', appUser: 'ledger_e2e_app', fsync: false });
  const { dir, ownerUrl, appUrl } = database;

  const secret = randomBytes(32).toString('base64url');
  process.env.NEXTAUTH_SECRET = secret;
  process.env.DATABASE_URL = appUrl;
  process.env.LEDGER_DATA_DIR = dir;
  const { createDb } = await import('@/lib/db/client.ts');
  const { seed } = await import('./seed.ts');
  const { seedDemoCampaign } = await import('@/lib/demo/seed.ts');
  const db = createDb(appUrl, 4);
  const seeded = await seed(db);
  await db.$disconnect();

  if (!nextBuildIsFresh()) {
    const build = spawnSync('npx', ['next', 'build'], {
      stdio: 'inherit',
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
    });
    if (build.status !== 0) throw new Error('next build failed');
  }
  // Forced replay needs a provider and the worker: the sandbox provider runs in this process (its
  // /_sandbox/deliveries counts what recipients got), the demo's crashed campaign is sent through it,
  // and scripts/worker.ts runs as its own process, as `npm start` does.
  const sandbox = await startSandbox({ host: '127.0.0.1' });
  const demoDb = createDb(appUrl, 4);
  const operatorA = seeded.users.operatorA;
  const demo = await seedDemoCampaign({
    db: demoDb,
    sandboxUrl: sandbox.url,
    approver: { kind: 'user', id: operatorA.id, label: operatorA.email, role: 'operator' },
  });
  await demoDb.$disconnect();
  // A rate limit slow enough that the journey can pause a running replay (F5) before it ends.
  const providers = JSON.stringify({ sandbox: { type: 'sandbox', url: sandbox.url, rateLimitPerSecond: 8 } });
  const worker = spawn(process.execPath, ['--import', 'tsx', 'scripts/worker.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: appUrl,
      MIGRATION_DATABASE_URL: ownerUrl,
      LEDGER_PROVIDERS: providers,
      RECONCILE_INTERVAL_SECONDS: '3600',
      LEDGER_DATA_DIR: dir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the replay worker did not get ready within 60 s')), 60_000);
    worker.on('exit', (code) => reject(new Error(`the replay worker exited with ${code}`)));
    worker.stderr?.on('data', (d) => process.stderr.write(d));
    worker.stdout?.on('data', (d: Buffer) => {
      if (process.env.E2E_DEBUG) process.stdout.write(d);
      if (d.toString().includes('ready:')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  const replay = { runId: demo.runId, sandboxUrl: sandbox.url, deliveriesBefore: sandbox.deliveries.length };

  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  const child = spawn('npx', ['next', 'start', '-p', String(port), '-H', '127.0.0.1'], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: appUrl,
      NEXTAUTH_SECRET: secret,
      NEXTAUTH_URL: baseURL,
      LEDGER_DATA_DIR: dir,
      NEXT_TELEMETRY_DISABLED: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout?.on('data', (d) => process.env.E2E_DEBUG && process.stdout.write(d));
  child.stderr?.on('data', (d) => process.stderr.write(d));
  await waitForHttp(`${baseURL}/sign-in`, child);
  process.env.E2E_BASE_URL = baseURL;
  writeFileSync(STATE_FILE, JSON.stringify({ baseURL, secret, appUrl, ownerUrl, dataDir: dir, seeded, replay }));

  return async () => {
    for (const pid of [child.pid, worker.pid]) {
      if (!pid) continue;
      try {
        process.kill(-pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await sandbox.stop();
    await database.stop();
  };
}
