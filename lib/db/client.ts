// One Prisma client per process (kept on globalThis so Next's dev reloads do not leak pools).
// Secrets are omitted from every query unless a caller asks for them explicitly.
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { Prisma, PrismaClient } from './generated/client.ts';
import { env } from '../env.ts';
import { componentLogger } from '../ops/log.ts';

export { Prisma };
export type { PrismaClient };

// On globalThis, like the client itself: the production server loads lib/ twice (Next's route bundles,
// and the agent API's modules that its front serves directly), and the copy that did not make the
// shared client must still find its pool, or every hot statement would fall back to Prisma.
const poolHolder = globalThis as unknown as { __ledgerPools?: WeakMap<object, pg.Pool> };
const pools = (poolHolder.__ledgerPools ??= new WeakMap<object, pg.Pool>());

/** Whether a connection string says it goes through a transaction-mode pooler (`pgbouncer=true`, the
 *  convention Prisma uses too). Session state does not survive a transaction there: no prepared
 *  statement names, and no session advisory locks (which is why a worker refuses such a URL). */
export function marksTransactionPooler(connectionString: string): boolean {
  try {
    return new URL(connectionString).searchParams.get('pgbouncer') === 'true';
  } catch {
    return false; // not a URL (a key=value string): no mark
  }
}

/**
 * Whether the hot paths may use named prepared statements (parsed and planned once per connection).
 * Not through a transaction-mode pooler that does not track them (PgBouncer before 1.21): there a
 * name prepared on one client's server connection collides with another client's. Off when the URL
 * says `pgbouncer=true` (the convention Prisma uses too) or DATABASE_PREPARED_STATEMENTS=false.
 */
export function preparedStatementsFor(connectionString: string): { url: string; prepared: boolean } {
  let url = connectionString;
  const pooler = marksTransactionPooler(connectionString);
  try {
    const parsed = new URL(connectionString);
    parsed.searchParams.delete('pgbouncer');
    url = parsed.toString();
  } catch {
    // Not a URL (a key=value string): leave it as it is.
  }
  return { url, prepared: !pooler && env().DATABASE_PREPARED_STATEMENTS };
}

/** Statement names are dropped in one place, so every caller may keep naming its hot statements. */
function withoutStatementNames(pool: pg.Pool): void {
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { query: unknown }).query = (config: unknown, ...rest: unknown[]) =>
    query(
      typeof config === 'object' && config !== null && 'name' in config ? { ...config, name: undefined } : config,
      ...rest,
    );
}

/**
 * A statement that has not answered within the query deadline gets an error (503 to its caller), and
 * its connection is closed: a server that stops answering without closing its connections (paused,
 * partitioned) would otherwise hold the connection, and every query queued behind it, for as long as
 * it hangs. node-postgres's query_timeout only answers the caller; it leaves the connection waiting.
 */
function closeOnQueryDeadline(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const close = (error: unknown) => {
    if ((error as Error | undefined)?.message === 'Query read timeout') {
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    }
  };
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (error: unknown, result: unknown) => {
        close(error);
        (callback as (e: unknown, r: unknown) => void)(error, result);
      };
      return query(...args);
    }
    const result = query(...args);
    if (result && typeof (result as Promise<unknown>).then === 'function') {
      (result as Promise<unknown>).then(undefined, close);
    }
    return result;
  };
}

export interface ClientOptions {
  /** Pool size (20 unless given). */
  max?: number;
  /** Client-side deadline of each statement, in ms; 0 or unset: none. */
  queryTimeoutMs?: number;
}

function makeClient(connectionString: string, options: ClientOptions = {}) {
  const { url, prepared } = preparedStatementsFor(connectionString);
  const queryTimeoutMs = options.queryTimeoutMs || undefined;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 20,
    // A request waits at most this long for a connection (acquired, or opened: a paused server
    // accepts the TCP connection and never answers the startup), then fails (503 to an agent)
    // instead of queueing without bound behind an exhausted pool or an unreachable server.
    connectionTimeoutMillis: env().DATABASE_POOL_TIMEOUT_MS,
    query_timeout: queryTimeoutMs,
  });
  if (queryTimeoutMs) pool.on('connect', closeOnQueryDeadline);
  // A connection that drops while idle in the pool (PostgreSQL or PgBouncer restarted, a network
  // blip) is an 'error' on the pool; unheard, it is an uncaught exception that ends the process. The
  // pool has already discarded that connection and the next query opens a fresh one: log and go on.
  pool.on('error', (err) => componentLogger('db').warn({ err: err.message }, 'idle database connection lost'));
  if (!prepared) withoutStatementNames(pool);
  const client = new PrismaClient({
    adapter: new PrismaPg(pool, { disposeExternalPool: true }),
    omit: { user: { passwordHash: true }, runtimeKey: { secretHash: true } },
  });
  pools.set(client, pool);
  return client;
}

/**
 * The node-postgres pool under a root client (undefined for a transaction). Only for the hot paths:
 * the claim (a single self-contained SQL function call where Prisma's per-query overhead was measured
 * at about a third of the claim's cost); the API's runtime-key check and Idempotency-Key record
 * (plain one-row statements that every request paid Prisma's per-query cost for two to four times;
 * the SDK bench went from 44 to 52 effects/s in process once they went direct); the ledger's
 * transitions and raw-response writes, and the replay executor's item window and outcomes, which it
 * makes for every item (Prisma's per-query cost was a third of the executor's CPU). Everything else
 * goes through Prisma.
 */
export function sqlPool(client: DbOrTx): pg.Pool | undefined {
  return pools.get(client);
}

/**
 * One parameterized statement on the root client's pool, or through Prisma inside a transaction
 * (or on a client without one). Same SQL either way ($1, $2, ... placeholders); rows as node-postgres
 * returns them (bigint columns as strings).
 */
export async function sqlRows<T>(client: DbOrTx, text: string, values: unknown[], name?: string): Promise<T[]> {
  const pool = pools.get(client);
  if (pool) return (await pool.query<T & pg.QueryResultRow>(name ? { name, text, values } : { text, values })).rows;
  return (client as Db).$queryRawUnsafe<T[]>(text, ...values);
}

export type Db = ReturnType<typeof makeClient>;
/** A client or an interactive transaction: commands accept either so callers can compose them. */
export type DbOrTx = Db | Prisma.TransactionClient;

const holder = globalThis as unknown as { __ledgerDb?: Db };

/** The application's client, connected as the app role (DATABASE_URL). */
export function db(): Db {
  if (!holder.__ledgerDb) {
    const url = env().DATABASE_URL;
    if (!url) throw new Error('DATABASE_URL is not set: start the app with `npm start`, which provides it.');
    holder.__ledgerDb = makeClient(url, { queryTimeoutMs: env().DATABASE_QUERY_TIMEOUT_MS });
  }
  return holder.__ledgerDb;
}

/** A separate client (tests, benchmarks, scripts that talk to several databases). */
export function createDb(connectionString: string, max?: number, options: Omit<ClientOptions, 'max'> = {}): Db {
  return makeClient(connectionString, { ...options, max });
}
