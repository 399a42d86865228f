// Structured JSON logs (pino), one object per line on stdout for the log pipeline. Request lines carry
// the request id (the caller's X-Request-Id, or one made up and returned in the answer) and the actor.
import pino, { type Logger } from 'pino';
import { env } from '../env.ts';

/**
 * pino's error serializer (type, message, stack, cause, own fields) without the live objects some
 * libraries attach to an error: pg's pool puts its whole client (connection parameters, sockets,
 * queues) on an idle client's error, which made one log line several kilobytes of noise.
 */
const LIVE_OBJECTS = ['client', 'connection', 'socket'];
export function serializeError(error: unknown): unknown {
  const out = pino.stdSerializers.err(error as Error) as unknown as Record<string, unknown>;
  if (out && typeof out === 'object') for (const key of LIVE_OBJECTS) delete out[key];
  return out;
}

const holder = globalThis as unknown as { __ledgerLogger?: Logger };

export function logger(): Logger {
  holder.__ledgerLogger ??= pino({
    level: env().LOG_LEVEL ?? 'info',
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    serializers: { err: serializeError },
  });
  return holder.__ledgerLogger;
}

/**
 * A logger for one part (web, api, worker): every line names it. A part that runs inside the test
 * process (the API's route modules) may stay at warn under NODE_ENV=test unless LOG_LEVEL says
 * otherwise; separate processes (the worker, the web server) log at info, and tests read their lines.
 */
export function componentLogger(component: string, quietUnderTest = false): Logger {
  const level = env().LOG_LEVEL ?? (quietUnderTest && env().NODE_ENV === 'test' ? 'warn' : 'info');
  return logger().child({ component }, { level });
}
