// The chunk loop: one chunk job (a range of frozen replay items) run by one handler. Lanes pull items
// from a buffer refilled one window at a time (the set is streamed, never loaded), each lane sending
// one item at a time; the handler stops at a pause or cancel, and completes the replay after its
// last item.
import { sqlRows } from '../db/client.ts';
import { completeIfDone } from './complete-replay.ts';
import { executorActor, type ExecutorDeps, type ItemContext } from './executor.ts';
import { readWindow, WINDOW, type ItemRow } from './item-window.ts';
import type { ReplayChunk } from './jobs.ts';
import { Tally } from './outcome-tally.ts';
import { sendItem } from './send-item.ts';
import { span } from './step-trace.ts';
import { traced } from '../ops/tracing.ts';

export function runChunk(deps: ExecutorDeps, chunk: ReplayChunk): Promise<{ processed: number; stoppedBy?: string }> {
  const attributes = {
    'ledger.replay_id': chunk.replayId,
    'ledger.chunk.from': chunk.fromId,
    'ledger.chunk.to': chunk.toId,
  };
  return traced('replay.chunk', attributes, async (s) => {
    const result = await runChunkUntraced(deps, chunk);
    s?.setAttributes({ 'ledger.chunk.processed': result.processed, 'ledger.chunk.stopped_by': result.stoppedBy ?? '' });
    return result;
  });
}

async function runChunkUntraced(
  deps: ExecutorDeps,
  chunk: ReplayChunk,
): Promise<{ processed: number; stoppedBy?: string }> {
  const { db } = deps;
  const statusOf = async (id: string) =>
    (
      await sqlRows<{ status: string; run_id: string }>(
        db,
        'SELECT status, run_id::text AS run_id FROM replay WHERE id = $1::uuid',
        [id],
      )
    )[0];
  const replay = await statusOf(chunk.replayId);
  if (!replay || replay.status !== 'running') return { processed: 0, stoppedBy: replay?.status ?? 'missing' };
  const replayId = chunk.replayId;
  const runId = replay.run_id;
  const actor = executorActor(replayId);
  const parallel = Math.max(1, deps.itemConcurrency ?? 8);

  let cursor = BigInt(chunk.fromId) - 1n;
  const last = BigInt(chunk.toId);
  let buffer: ItemRow[] = [];
  let exhausted = false;
  let refill: Promise<void> | undefined;
  let processed = 0;
  let stoppedBy: string | undefined;
  let failure: unknown;
  const tally = new Tally(db, replayId);
  const context: ItemContext = { deps, tally, replayId, runId, actor };
  const next = async (): Promise<ItemRow | undefined> => {
    for (;;) {
      if (stoppedBy || failure !== undefined) return undefined;
      const item = buffer.shift();
      if (item) return item;
      if (exhausted) return undefined;
      refill ??= (async () => {
        const t0 = performance.now();
        const rows = await readWindow(db, { replayId, runId, actorId: actor.id, after: cursor, last });
        if (rows.length < WINDOW) exhausted = true;
        if (rows.length) cursor = BigInt(rows[rows.length - 1]!.id);
        buffer = rows;
        span('window', t0);
      })().finally(() => (refill = undefined));
      await refill;
    }
  };
  const lane = async () => {
    for (let item = await next(); item; item = await next()) {
      try {
        const r = await sendItem(context, item);
        if (r === 'stopped') {
          stoppedBy ??= (await statusOf(replayId))?.status ?? 'missing';
          return;
        }
        processed++;
      } catch (error) {
        if (failure === undefined) failure = error;
        return;
      }
    }
  };
  const flusher = setInterval(
    () => void tally.flush().catch((e: unknown) => deps.log?.(`replay counters: ${(e as Error).message}`)),
    500,
  );
  try {
    await Promise.all(Array.from({ length: parallel }, lane));
  } finally {
    clearInterval(flusher);
    await tally
      .flush()
      .catch((e: unknown) => deps.log?.(`replay counters: ${(e as Error).message} (the completion recounts)`));
  }
  if (failure !== undefined) {
    if (failure instanceof Error) Object.assign(failure, { processed });
    throw failure;
  }
  if (stoppedBy) return { processed, stoppedBy };
  await completeIfDone(db, replayId, runId, actor);
  return { processed };
}
