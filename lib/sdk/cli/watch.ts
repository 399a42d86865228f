// `effect-ledger replay watch`: polls a replay's progress until it ends. On a terminal, one progress
// bar redrawn in place; otherwise (a pipe, a CI log) one line whenever the counts change. Exit 0 when
// the replay completed with nothing failed or unknown, 1 when it ended any other way.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ManageClient } from './client.ts';
import type { Out } from './output.ts';

interface Progress {
  status: string;
  total: number;
  sent: number;
  skipped: number;
  failed: number;
  unknown: number;
  remaining: number;
  fraction: number;
}

const ENDED = new Set(['completed', 'cancelled', 'rejected', 'expired']);

export function progressLine(replayId: string, p: Progress): string {
  return `replay ${replayId}: ${p.status} ${p.total - p.remaining}/${p.total} sent=${p.sent} skipped=${p.skipped} failed=${p.failed} unknown=${p.unknown}`;
}

export function progressBar(p: Progress, width = 30): string {
  const filled = Math.round(Math.min(1, Math.max(0, p.fraction)) * width);
  const pct = `${Math.round(p.fraction * 100)}%`.padStart(4);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${pct} ${p.total - p.remaining}/${p.total} ${p.status} (sent ${p.sent}, failed ${p.failed}, unknown ${p.unknown})`;
}

export async function watchReplay(
  api: ManageClient,
  replayId: string,
  out: Out,
  intervalMs: number,
  tty: boolean = Boolean(process.stderr.isTTY) && !out.json,
): Promise<number> {
  let last = '';
  for (;;) {
    const p = await api.get<Progress>(`/replays/${encodeURIComponent(replayId)}/progress`);
    if (tty) process.stderr.write(`\r${progressBar(p)}\x1b[K`);
    else {
      const line = out.json ? JSON.stringify(p) : progressLine(replayId, p);
      if (line !== last) out.write(`${line}\n`);
      last = line;
    }
    if (ENDED.has(p.status)) {
      if (tty) process.stderr.write('\n');
      return p.status === 'completed' && p.failed === 0 && p.unknown === 0 ? 0 : 1;
    }
    await sleep(intervalMs);
  }
}
