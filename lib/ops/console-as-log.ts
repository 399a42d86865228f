// One JSON object per line on stdout, whoever writes: the ledger's own code logs through pino
// (./log.ts), but Next.js, Prisma, pg-boss and other libraries write with console.* (several lines
// for a stack trace) or raise process warnings (printed by Node on stderr as text). A long-running
// process calls routeConsoleToLog() first: every console call becomes one log object (an Error among
// the arguments goes under `err`, stack included), every process warning one `warn` object, and an
// uncaught exception one `fatal` object before the exit Node would have made anyway.
import { format, stripVTControlCharacters } from 'node:util';
import type { Logger } from 'pino';
import { logger } from './log.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';

/** The arguments of one console call as a log object and message. */
export function consoleArgsToEntry(args: unknown[]): { fields: { err?: unknown }; msg: string } {
  const err = args.find((a) => a instanceof Error);
  const rest = err === undefined ? args : args.filter((a) => a !== err);
  const text = stripVTControlCharacters(format(...rest)).trim();
  return { fields: err === undefined ? {} : { err }, msg: text || (err as Error | undefined)?.message || '' };
}

let routed = false;

export function routeConsoleToLog(component: string): Logger {
  const log = logger().child({ component });
  if (routed) return log;
  routed = true;
  const via = log.child({ via: 'console' });
  const write =
    (level: Level) =>
    (...args: unknown[]) => {
      const { fields, msg } = consoleArgsToEntry(args);
      via[level](fields, msg);
    };
  console.log = write('info');
  console.info = write('info');
  console.debug = write('debug');
  console.warn = write('warn');
  console.error = write('error');
  console.trace = (...args: unknown[]) => {
    const { fields, msg } = consoleArgsToEntry(args);
    via.error({ ...fields, stack: new Error(msg).stack }, msg);
  };
  // Node's own printer of warnings (a listener it adds at start-up) is replaced by the log.
  process.removeAllListeners('warning');
  process.on('warning', (warning) => log.warn({ err: warning }, warning.message));
  process.on('uncaughtException', (error) => {
    log.fatal({ err: error }, `uncaught exception: ${error.message}`);
    process.exit(1);
  });
  return log;
}
