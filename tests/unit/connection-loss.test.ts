// Every shape in which "the database cannot serve now" reaches the application is recognized, so
// it is answered 503 with Retry-After (lib/api/problem.ts) and never 500; and nothing else is.
import { describe, expect, it } from 'vitest';
import { DriverAdapterError } from '@prisma/driver-adapter-utils';
import { Prisma } from '@/lib/db/client.ts';
import { isConnectionLoss } from '@/lib/db/connection-loss.ts';
import { problemFrom, problemHeaders } from '@/lib/api/problem.ts';

/** An ErrorResponse as node-postgres builds it (what PostgreSQL or PgBouncer sent). */
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}
function socketError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, syscall: 'connect', errno: -111 });
}
function prismaKnown(code: string, cause?: unknown): Error {
  return new Prisma.PrismaClientKnownRequestError('request failed', {
    code,
    clientVersion: '7',
    meta: cause ? { driverAdapterError: cause } : undefined,
  });
}

const UNAVAILABLE: [string, unknown][] = [
  ['PostgreSQL shutting down (57P01)', pgError('57P01', 'terminating connection due to administrator command')],
  ['crash shutdown (57P02)', pgError('57P02', 'terminating connection because of crash of another server process')],
  ['cannot connect now (57P03)', pgError('57P03', 'the database system is starting up')],
  ['too many connections (53300)', pgError('53300', 'sorry, too many clients already')],
  ['connection failure (08006)', pgError('08006', 'connection failure')],
  [
    'PgBouncer server_login_retry (08P01)',
    pgError('08P01', 'server login has been failing, try again later (server_login_retry)'),
  ],
  ['PgBouncer max_client_conn', pgError('08P01', 'no more connections allowed (max_client_conn)')],
  ['PgBouncer query_wait_timeout', pgError('08P01', 'query_wait_timeout')],
  ['PgBouncer without a code', new Error('pgbouncer cannot connect to server')],
  ['refused', socketError('ECONNREFUSED')],
  ['reset', socketError('ECONNRESET')],
  ['timed out', socketError('ETIMEDOUT')],
  ['pool timeout', new Error('timeout exceeded when trying to connect')],
  ['connection ended', new Error('Connection terminated unexpectedly')],
  ['query deadline', new Error('Query read timeout')],
  ['Prisma P1001', prismaKnown('P1001')],
  ['Prisma P1002', prismaKnown('P1002')],
  ['Prisma P1017', prismaKnown('P1017')],
  ['Prisma P2024', prismaKnown('P2024')],
  ['Prisma P2028 (a transaction the pool could not start in time)', prismaKnown('P2028')],
  ['adapter DatabaseNotReachable', new DriverAdapterError({ kind: 'DatabaseNotReachable', host: 'db', port: 5432 })],
  ['adapter ConnectionClosed', new DriverAdapterError({ kind: 'ConnectionClosed' })],
  ['adapter SocketTimeout', new DriverAdapterError({ kind: 'SocketTimeout' })],
  ['adapter TooManyConnections', new DriverAdapterError({ kind: 'TooManyConnections', cause: 'too many' })],
  [
    'adapter postgres 08P01 inside a Prisma error',
    prismaKnown(
      'P2010',
      new DriverAdapterError({
        kind: 'postgres',
        code: '08P01',
        severity: 'ERROR',
        message: 'server login has been failing, try again later (server_login_retry)',
        detail: undefined,
        column: undefined,
        hint: undefined,
      }),
    ),
  ],
  ['wrapped in a cause', new Error('claim failed', { cause: socketError('ECONNREFUSED') })],
  ['every address refused', new AggregateError([socketError('ECONNREFUSED'), socketError('ECONNREFUSED')])],
];

const NOT_UNAVAILABLE: [string, unknown][] = [
  ['unique violation', pgError('23505', 'duplicate key value violates unique constraint')],
  ['transition refused', pgError('EL002', 'transition done -> pending refused')],
  ['permission denied', pgError('42501', 'permission denied for table effect')],
  ['wrong password of the login', pgError('28P01', 'password authentication failed for user "app"')],
  ['adapter unique violation', new DriverAdapterError({ kind: 'UniqueConstraintViolation', constraint: undefined })],
  ['Prisma record not found', prismaKnown('P2025')],
  ['a bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
  ['nothing', undefined],
];

describe('connection loss: what the database could not serve', () => {
  it.each(UNAVAILABLE)('%s is unavailable: 503 with Retry-After', (_name, error) => {
    expect(isConnectionLoss(error)).toBe(true);
    const p = problemFrom(error);
    expect(p).toMatchObject({ status: 503, code: 'unavailable' });
    expect(problemHeaders(p)['retry-after']).toMatch(/^\d+$/);
  });

  it.each(NOT_UNAVAILABLE)('%s is not', (_name, error) => {
    expect(isConnectionLoss(error)).toBe(false);
  });

  it('a cause chain that loops ends', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    a.cause = new Error('b', { cause: a });
    expect(isConnectionLoss(a)).toBe(false);
  });
});
