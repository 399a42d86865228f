// Whether an error means the database could not serve the request (down, restarting, failing over,
// paused, unreachable, out of connections, a pooler that cannot reach it, an exhausted pool): worth
// retrying after a pause, unlike a constraint or a bug. Every such error is answered 503 with
// Retry-After (lib/api/problem.ts), never 500.
//
// The same failure reaches us in several shapes: node-postgres's own errors (SQLSTATE in `code`, or
// a socket errno), PgBouncer's ErrorResponses (mostly 08P01 with its own wording), Prisma's errors
// (P1001-style codes) and the driver adapter's DriverAdapterError, whose `cause` carries a `kind` or
// the original SQLSTATE. Each wrapper keeps the original under `cause` or `meta`, so the whole chain
// is looked at.

// Class 08 (connection exception), 57P01-57P03 (admin/crash shutdown, cannot connect now), 53300
// (too many connections), 53400 (configuration limit exceeded, such as a role's connection limit).
const SQLSTATE = /^(08...|57P0[1-3]|53300|53400)$/;
const ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// Prisma: can't reach (P1001), timed out reaching (P1002), operations timed out (P1008), server closed
// the connection (P1017), pool timeout (P2024), a transaction that could not start or was cut off in
// time, mostly a pool that hands out no connection (P2028), too many connections (P2037).
const PRISMA = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2028', 'P2037']);
// The driver adapter's kinds for the same (@prisma/driver-adapter-utils).
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
const MESSAGE = new RegExp(
  [
    'Connection terminated',
    'connection (is )?closed',
    'ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE',
    'terminating connection',
    'the database system is (starting up|shutting down|in recovery mode|not yet accepting connections)',
    'Client has encountered a connection error',
    'timeout exceeded when trying to connect',
    'Query read timeout',
    'Connection terminated due to connection timeout',
    // PgBouncer's own refusals (server_login_retry, max_client_conn, query_wait_timeout, a stopping
    // or paused pooler).
    'server login has been failing',
    'no more connections allowed',
    'query_wait_timeout',
    'server conn crashed',
    'pgbouncer cannot connect to server',
    'client_login_timeout',
    'database .* is (paused|disabled)',
    'server shutting down',
    "Can't reach database server",
    'Timed out fetching a new connection from the connection pool',
    'Server has closed the connection',
  ].join('|'),
  'i',
);

interface ErrorShape {
  code?: unknown;
  kind?: unknown;
  originalCode?: unknown;
  message?: unknown;
  cause?: unknown;
  meta?: { driverAdapterError?: unknown; code?: unknown };
}

function matchesOne(e: ErrorShape): boolean {
  const codes = [e.code, e.originalCode, e.meta?.code].filter((c): c is string => typeof c === 'string');
  if (codes.some((c) => SQLSTATE.test(c) || ERRNO.has(c) || PRISMA.has(c))) return true;
  if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true;
  if (e.kind === 'postgres' && typeof e.code === 'string' && SQLSTATE.test(e.code)) return true;
  return typeof e.message === 'string' && MESSAGE.test(e.message);
}

export function isConnectionLoss(error: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length) {
    const e = queue.shift();
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const shape = e as ErrorShape;
    if (matchesOne(shape)) return true;
    queue.push(shape.cause, shape.meta?.driverAdapterError);
    // AggregateError (a host name with several addresses, each refused).
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors)) queue.push(...errors);
  }
  return false;
}
