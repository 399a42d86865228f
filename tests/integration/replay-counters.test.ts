// F5: a replay's progress counters. Handlers add their outcomes in batches, and the completion
// recounts every counter from the items; a batch whose write lands after that recount already
// counted (a handler's last flush queued behind another) must not be added on top of it.
import { describe, expect, it } from 'vitest';
import { requestReplay } from '@/lib/replay/index.ts';
import { Tally } from '@/lib/replay/outcome-tally.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { userActor } from '../helpers/factories.ts';
import { makeCampaign } from './replay-fixtures.ts';

const t = await createTestDatabase({ poolSize: 4 });

async function countersOf(replayId: string) {
  return t.db.replay.findUniqueOrThrow({
    where: { id: replayId },
    select: { sent: true, skipped: true, failed: true, unknown: true },
  });
}

describe('replay progress counters', () => {
  it('F5: a late batch adds to a running replay; on a completed one the counters are counted from the items again', async () => {
    const c = await makeCampaign(t.db, { not_sent: 2 }, { fourEyesReplay: false, provider: 'sandbox' });
    const r = await requestReplay(
      { db: t.db, actor: userActor('operator') },
      { runId: c.runId, confirmCount: 2, reason: 'x' },
    );
    await t.owner(`UPDATE replay SET status = 'running' WHERE id = $1`, [r.replayId]);
    const running = new Tally(t.db, r.replayId);
    running.add('sent', 'none');
    await running.flush();
    expect(await countersOf(r.replayId)).toMatchObject({ sent: 1 });

    // Completed with its recount: both items sent. A handler's last batch arrives after it.
    await t.owner(`UPDATE replay_item SET outcome = 'sent' WHERE replay_id = $1`, [r.replayId]);
    await t.owner(
      `UPDATE replay SET status = 'completed', sent = 2, skipped = 0, failed = 0, unknown = 0 WHERE id = $1`,
      [r.replayId],
    );
    const late = new Tally(t.db, r.replayId);
    late.add('sent', 'none');
    await late.flush();
    expect(await countersOf(r.replayId)).toEqual({ sent: 2, skipped: 0, failed: 0, unknown: 0 });

    // An item whose outcome a late handler changed after the completion is counted as it is now.
    const [item] = await t.db.replayItem.findMany({ where: { replayId: r.replayId }, take: 1 });
    await t.owner(`UPDATE replay_item SET outcome = 'unknown' WHERE id = $1`, [item!.id]);
    late.add('unknown', 'sent');
    await late.flush();
    expect(await countersOf(r.replayId)).toEqual({ sent: 1, skipped: 0, failed: 0, unknown: 1 });
  });
});
