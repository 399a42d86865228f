// The agent API served over real HTTP for the SDK benchmark: a plain node:http server that turns each
// request into a web Request and hands it to the same exported route handlers of app/api/v1 that
// `next start` runs (Next's own routing, middleware and build are not in the path; a clean clone has
// no .next build, and building one would take a good part of the bench's time budget).
// Run as a child process by sdk-http.ts (its own core), or in process by the reduced test.
import { createServer, type Server } from 'node:http';
import { writeSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { setDb } from '@/lib/api/db.ts';
import { createDb } from '@/lib/db/client.ts';
import { serveApi } from '../support/api-router.ts';
import { startServerProbe } from './server-probe.ts';

/** Serves the API on a free port of 127.0.0.1 with the app role's client (`connections` pooled). */
export async function startApiServer(
  appUrl: string,
  connections: number,
): Promise<{ url: string; stop(): Promise<void> }> {
  const db = createDb(appUrl, connections);
  setDb(db);
  const server: Server = createServer((req, res) => {
    serveApi(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'internal', message: String(error) } }));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      setDb(undefined);
      await db.$disconnect();
    },
  };
}

// As a child process: argv[2] = app URL, argv[3] = pool size; prints the URL as a JSON line on stdout,
// or on the descriptor SDK_HTTP_URL_FD names (the SDK bench sends stdout, the access lines, to a file),
// and stops on stdin close.
// With BENCH_SDK_PROFILE=<dir>, a line "phase <name>" on stdin starts that phase's profile
// (server-probe.ts) and writes the previous one.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = process.env.BENCH_SDK_PROFILE;
  const probe = dir ? await startServerProbe(path.resolve(dir)) : null;
  const api = await startApiServer(process.argv[2]!, Number(process.argv[3] ?? 16));
  const urlFd = process.env.SDK_HTTP_URL_FD ? Number(process.env.SDK_HTTP_URL_FD) : 1;
  writeSync(urlFd, `${JSON.stringify({ url: api.url })}\n`);
  const lines = createInterface({ input: process.stdin });
  let pending = Promise.resolve();
  lines.on('line', (line) => {
    const phase = /^phase (\S+)$/.exec(line.trim())?.[1];
    if (phase && probe) pending = pending.then(() => probe.phase(phase));
  });
  lines.on('close', () => {
    void pending
      .then(() => probe?.stop())
      .then(() => api.stop())
      .then(() => process.exit(0));
  });
}
