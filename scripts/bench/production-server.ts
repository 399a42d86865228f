// The production web server for the benchmarks: `scripts/support/web-server.ts` (what `npm run
// start:prod` runs) on the project's own build, as the app role on a free port of 127.0.0.1. Its front
// serves the agent API from the route handlers and the console through Next, and writes one JSON
// access line per request, as in production.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from '@/lib/db/embedded.ts';

const root = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

/** Starts the server (`nodeArgs` before the script: a profiler); ready once it logs that it listens. */
export async function startProductionServer(
  appUrl: string,
  nodeArgs: string[] = [],
): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ledger-bench-web-'));
  const child = spawn(
    process.execPath,
    [...nodeArgs, '--import', 'tsx', path.join(root, 'scripts/support/web-server.ts')],
    {
      cwd: root,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        DATABASE_URL: appUrl,
        NEXTAUTH_SECRET: randomBytes(32).toString('base64url'),
        NEXTAUTH_URL: `http://127.0.0.1:${port}`,
        PORT: String(port),
        LISTEN_HOST: '127.0.0.1',
        LEDGER_DATA_DIR: dataDir,
        NEXT_TELEMETRY_DISABLED: '1',
        // Readiness is its "listening" line, and the access lines are part of what production pays.
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = `http://127.0.0.1:${port}`;
  // The server logs a JSON line with "listening" once it accepts connections; wait for it.
  await new Promise<void>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      if (!line.includes('"msg":"listening"')) return;
      // Later lines are not split here: that would cost the load generator a parse per request.
      rl.close();
      resolve();
    });
    child.once('exit', (code) => reject(new Error(`the production server exited with ${code}`)));
  });
  // Its access lines are read and dropped, so a full pipe never stalls it.
  child.stdout!.resume();
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => {
          rmSync(dataDir, { recursive: true, force: true });
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
