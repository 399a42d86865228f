// REPLAY_TRACE=1: the average time of each step of the executor (window, claim, send, settle),
// printed every 5 s.
import { env } from '../env.ts';

const TRACE = env().REPLAY_TRACE;
const spans = new Map<string, { n: number; ms: number }>();

/** Counts the time since `t0` (performance.now()) under `name`. */
export function span(name: string, t0: number) {
  if (!TRACE) return;
  const s = spans.get(name) ?? { n: 0, ms: 0 };
  s.n++;
  s.ms += performance.now() - t0;
  spans.set(name, s);
}

if (TRACE)
  setInterval(() => {
    if (spans.size)
      console.error(
        `[trace ${process.pid}] ` +
          [...spans].map(([k, v]) => `${k} n=${v.n} avg=${(v.ms / v.n).toFixed(1)}ms`).join(' | '),
      );
    spans.clear();
  }, 5000).unref();
