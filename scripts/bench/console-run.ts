// `node --import tsx scripts/bench/console-run.ts`: the console benchmark alone, on a fresh server.
import { startBenchDatabase } from './harness.ts';
import { benchConsole } from './console.ts';

const db = await startBenchDatabase();
try {
  console.table(await benchConsole(db));
} finally {
  await db.stop();
}
