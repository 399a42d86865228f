// The production HTTP server (`npm run start:prod` runs it after its checks): Next.js through its
// custom-server API behind a thin front that
//  - sets X-Forwarded-For to the one client address it can vouch for (lib/ops/client-address.ts:
//    the header is believed only through TRUSTED_PROXIES; `next start` keeps whatever a client sent),
//    so the audit trail and the per-source limits see the real source,
//  - gives every request an X-Request-Id (the caller's, or a new one) and writes one JSON access line
//    (for the agent API, the route's own answer line with the actor and operation),
//  - serves the agent API (/api/v1) straight from its route handlers (api-router.ts), with the
//    console's security headers; everything else goes to Next,
//  - on SIGTERM/SIGINT drains (http-drain.ts: no new connections, idle keep-alive ones closed, every
//    answer still to come says `Connection: close`), lets in-flight requests finish and exits 0.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import next from 'next';
import type { NextConfig } from 'next';
import { env } from '@/lib/env.ts';
import { clientAddress, parseTrustedProxies } from '@/lib/ops/client-address.ts';
import { routeConsoleToLog } from '@/lib/ops/console-as-log.ts';
import { componentLogger } from '@/lib/ops/log.ts';
import { startTracingFromEnv } from '@/lib/ops/tracing.ts';
import { answerWasLogged, isApiPath, serveApi } from './api-router.ts';
import { drainable } from './http-drain.ts';

// Next's own output (and any library's console lines) as JSON objects, like ours (console-as-log.ts).
routeConsoleToLog('web');
const e = env();
// Before Next loads the routes, so every request's span has the tracer provider (OTEL_EXPORTER_OTLP_ENDPOINT).
const tracing = startTracingFromEnv('effect-ledger-web');
const log = componentLogger('web');
const proxies = parseTrustedProxies(e.TRUSTED_PROXIES);
const app = next({ dev: false, dir: process.cwd(), hostname: e.LISTEN_HOST, port: e.PORT });
await app.prepare();
const handle = app.getRequestHandler();
// The headers next.config.js gives every console answer, given to the API's answers too: one list.
const configFile = pathToFileURL(path.resolve('next.config.js')).href;
const nextConfig = ((await import(configFile)) as { default: NextConfig }).default;
const everyPath = ((await nextConfig.headers?.()) ?? []).filter((rule) => rule.source === '/:path*');
const apiHeaders = Object.fromEntries(everyPath.flatMap((rule) => rule.headers.map((h) => [h.key, h.value])));

const server = createServer((req, res) => {
  const started = performance.now();
  const ip = clientAddress(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for']?.toString(), proxies);
  req.headers['x-forwarded-for'] = ip;
  delete req.headers['x-real-ip']; // a client-chosen fallback the API would otherwise read
  const requestId = req.headers['x-request-id']?.toString().slice(0, 128) || randomUUID();
  req.headers['x-request-id'] = requestId;
  res.setHeader('x-request-id', requestId);
  res.once('finish', () => {
    // One line per request: an agent API answer already has its own (actor and operation included).
    if (answerWasLogged(res)) return;
    const ms = Math.round((performance.now() - started) * 10) / 10;
    log.info(
      { requestId, ip, method: req.method, path: req.url?.split('?')[0], status: res.statusCode, ms },
      'request',
    );
  });
  (isApiPath(req.url) ? serveApi(req, res, apiHeaders) : handle(req, res)).catch((error: unknown) => {
    log.error({ requestId, err: error }, 'request failed');
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end('Internal error');
  });
});
const drain = drainable(server);
server.listen(e.PORT, e.LISTEN_HOST, () => log.info({ port: e.PORT, host: e.LISTEN_HOST }, 'listening'));

const stop = (signal: string) => {
  if (drain.draining) return;
  log.info({ signal }, 'stopping: no new connections; in-flight requests finish');
  void drain
    .stop(e.SHUTDOWN_GRACE_SECONDS * 1000)
    .then(({ cut }) => {
      if (cut) log.warn({ cut }, 'connections cut at the end of the grace period');
      return Promise.allSettled([app.close(), tracing?.shutdown()]);
    })
    .finally(() => {
      log.info('stopped');
      process.exit(0);
    });
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
