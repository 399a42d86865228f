// `node --import tsx scripts/bench/console-run.ts`: the console benchmark alone, on a fresh server
// (BENCH_CONSOLE_SIZES=10000,100000 for a quicker run).
import { startBenchDatabase } from './harness.ts';
import { benchConsole, DEFAULT_CONSOLE_SIZES } from './console.ts';

const sizes = process.env.BENCH_CONSOLE_SIZES?.split(',').map(Number) ?? DEFAULT_CONSOLE_SIZES;
const db = await startBenchDatabase();
try {
  for (const s of await benchConsole({ ...db, sizes })) console.table({ items: s.items, ...s.rows, ...s.figures });
} finally {
  await db.stop();
}
