// A worker stopped the way process managers stop it, mid-replay: SIGTERM to the npm process of
// `npm run worker` (as docs/DEPLOYMENT.md starts it), with a grace period shorter than its chunk. It
// takes no new chunk, gives its running one the grace period, hands back what is unfinished (pg-boss
// fails the active job, which goes back to the queue), releases its leadership and exits 0; the
// other worker finishes the replay: every target delivered exactly once, every item sent.
import { afterAll, describe, expect, it } from 'vitest';
import type PgBoss from 'pg-boss';
import { getReplayProgress, installJobEngine, requestReplay, startBoss, startReplay } from '@/lib/replay/index.ts';
import { startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { userActor } from '../helpers/factories.ts';
import { alive, descendants, ROOT, scriptEnv, startScript, type Started } from '../helpers/processes.ts';
import { makeCampaign, until } from './replay-fixtures.ts';

const TARGETS = 400;
let sandbox: Sandbox | undefined;
let sender: PgBoss | undefined;
const started: Started[] = [];
afterAll(async () => {
  for (const s of started.filter((x) => x.child.exitCode === null)) {
    for (const pid of descendants(s.child.pid!)) process.kill(pid, 'SIGKILL');
    s.child.kill('SIGKILL');
  }
  await sender?.stop({ graceful: false });
  await sandbox?.stop();
});

function npmWorker(appUrl: string, url: string): Started {
  const s = startScript(
    ['run', '--silent', 'worker'],
    scriptEnv({
      DATABASE_URL: appUrl,
      NODE_ENV: 'test',
      REPLAY_CONCURRENCY: '4',
      RECONCILE_INTERVAL_SECONDS: '1',
      SHUTDOWN_GRACE_SECONDS: '1',
      LEDGER_PROVIDERS: JSON.stringify({ sandbox: { type: 'sandbox', url } }),
      npm_config_update_notifier: 'false',
    }),
    ROOT,
    'npm',
  );
  started.push(s);
  return s;
}

describe('SIGTERM to a worker in the middle of a replay', () => {
  it(
    'exits 0 within its grace period; the other worker finishes: each target exactly once',
    { timeout: 300_000 },
    async () => {
      const t = await createTestDatabase({ poolSize: 10 });
      await installJobEngine(t.ownerUrl);
      sandbox = await startSandbox({ latencyMs: 20 });
      sender = await startBoss(t.appUrl);
      const c = await makeCampaign(
        t.db,
        { not_sent: TARGETS },
        { provider: 'sandbox', leaseSeconds: 120, settleWindowSeconds: 120, fourEyesReplay: false },
      );
      const operator = userActor('operator');
      const req = await requestReplay(
        { db: t.db, actor: operator },
        { runId: c.runId, confirmCount: TARGETS, reason: 'stop test' },
      );
      const first = npmWorker(t.appUrl, sandbox.url);
      await first.waitFor('leadership acquired');
      const second = npmWorker(t.appUrl, sandbox.url);
      await second.waitFor('worker ready');
      await startReplay(
        { db: t.db, actor: operator, jobs: sender },
        { replayId: req.replayId, seenStatus: 'approved' },
      );
      await until(
        'a quarter of the targets to be delivered',
        async () => sandbox!.deliveries.length >= TARGETS / 4,
        120_000,
        2,
      );

      const family = descendants(first.child.pid!);
      const signalled = Date.now();
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(10_000);
      expect(first.output()).toContain('"msg":"stopped"');
      expect(family.filter(alive)).toEqual([]);

      await until(
        'the other worker to complete the replay',
        async () => (await getReplayProgress({ db: t.db }, { replayId: req.replayId })).status === 'completed',
        180_000,
        100,
      );
      const perTarget = new Map<string, number>();
      for (const d of sandbox.deliveries) perTarget.set(d.to, (perTarget.get(d.to) ?? 0) + 1);
      expect(perTarget.size).toBe(TARGETS);
      expect([...perTarget.values()].filter((n) => n !== 1)).toEqual([]);
      const outcomes = await t.owner<{ outcome: string; n: string }>(
        `SELECT outcome, count(*) AS n FROM replay_item WHERE replay_id = $1 GROUP BY outcome`,
        [req.replayId],
      );
      expect(outcomes.rows.map((r) => [r.outcome, Number(r.n)])).toEqual([['sent', TARGETS]]);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    },
  );
});
