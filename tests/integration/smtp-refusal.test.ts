// The SMTP server refuses connections mid-replay: the replay stops and retries cleanly (the keys it
// could not send are freed as failed with the refusal as evidence, the chunk is retried by pg-boss),
// and no key ever reaches done without the server's receipt (S2).
import { afterAll, describe, expect, it } from 'vitest';
import type PgBoss from 'pg-boss';
import {
  getReplayProgress,
  installJobEngine,
  requestReplay,
  startBoss,
  startReplay,
  startReplayWorker,
  type ReplayWorker,
} from '@/lib/replay/index.ts';
import type { ProviderRegistry } from '@/lib/providers/registry.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { userActor } from '../helpers/factories.ts';
import { startTestSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.ts';
import { makeCampaign, smtpRegistry, until } from './replay-fixtures.ts';

let smtp: TestSmtpServer | undefined;
let worker: ReplayWorker | undefined;
let sender: PgBoss | undefined;
let providers: ProviderRegistry | undefined;

afterAll(async () => {
  await worker?.stop();
  await sender?.stop({ graceful: false });
  await providers?.close();
  await smtp?.close();
});

describe('SMTP server refusing connections mid-replay', () => {
  it(
    'S2 S3 F5: sends stop while the server refuses, resume when it is back; no done without a receipt, nobody gets two',
    { timeout: 180_000 },
    async () => {
      const t = await createTestDatabase({ poolSize: 30 });
      await installJobEngine(t.ownerUrl);
      smtp = await startTestSmtpServer();
      providers = smtpRegistry(smtp, { rateLimitPerSecond: 60 });
      worker = await startReplayWorker({
        appUrl: t.appUrl,
        db: t.db,
        providers,
        concurrency: 2,
        reconcileIntervalMs: 1_000,
      });
      sender = await startBoss(t.appUrl);
      const c = await makeCampaign(
        t.db,
        { not_sent: 300 },
        { leaseSeconds: 3, settleWindowSeconds: 2, fourEyesReplay: false },
      );
      const operator = userActor('operator');
      const req = await requestReplay(
        { db: t.db, actor: operator },
        { runId: c.runId, confirmCount: 300, reason: 'crashed campaign' },
      );
      await startReplay({ db: t.db, actor: operator, jobs: sender }, { replayId: req.replayId });

      await until('some deliveries', async () => smtp!.messages.length >= 60);
      await smtp.refuseConnections();
      const refusedAt = smtp.messages.length;
      // The executor meets the refusal: it frees the keys it claimed (failed, with the evidence).
      await until(
        'a refused send recorded as failed',
        async () => {
          const r = await t.owner<{ n: string }>(
            `SELECT count(*) AS n FROM effect_transition WHERE to_state = 'failed' AND actor_kind = 'executor' AND evidence->>'sent' = 'no'`,
          );
          return Number(r.rows[0]!.n) >= 4;
        },
        60_000,
      );
      const during = await getReplayProgress({ db: t.db }, { replayId: req.replayId });
      expect(during.status).toBe('running');
      expect(during.failed).toBe(0); // a refused connection is not a final outcome: it is retried
      expect(smtp.messages.length).toBe(refusedAt);

      await smtp.acceptConnections();
      await until(
        'the replay to complete and every claim to be settled',
        async () => {
          const p = await getReplayProgress({ db: t.db }, { replayId: req.replayId });
          if (p.status !== 'completed') return false;
          const pending = await t.owner<{ n: string }>(
            `SELECT count(*) AS n FROM effect e JOIN plan_item pi ON pi.key = e.key WHERE pi.run_id = $1 AND e.state = 'pending'`,
            [c.runId],
          );
          return pending.rows[0]!.n === '0';
        },
        120_000,
        200,
      ).catch(async (error) => {
        console.log(JSON.stringify(await getReplayProgress({ db: t.db }, { replayId: req.replayId })));
        console.log(
          JSON.stringify(
            (
              await t.owner(`SELECT name, state, retry_count, data FROM pgboss.job WHERE data->>'replayId' = $1`, [
                req.replayId,
              ])
            ).rows,
          ),
        );
        console.log(
          JSON.stringify(
            (
              await t.owner(
                `SELECT e.state, count(*) FROM effect e JOIN plan_item pi ON pi.key = e.key WHERE pi.run_id = $1 GROUP BY 1`,
                [c.runId],
              )
            ).rows,
          ),
        );
        throw error;
      });

      const counts = smtp.countByRecipient();
      expect([...counts.values()].filter((n) => n > 1)).toEqual([]);
      const rows = await t.owner<{ target: string; state: string; receipt: string | null }>(
        `SELECT pi.target, k.state::text AS state, e.receipt FROM plan_item pi JOIN effect_key k ON k.key = pi.key JOIN effect e ON e.key = k.key AND e.epoch = k.current_epoch WHERE pi.run_id = $1`,
        [c.runId],
      );
      const receipts = new Set(smtp.messages.map((m) => `${m.messageId} queue=${m.queueId}`));
      let done = 0;
      for (const r of rows.rows) {
        if (r.state === 'done') {
          done++;
          expect(receipts.has(r.receipt!), `${r.target} ${r.receipt}`).toBe(true);
          expect(counts.get(r.target)).toBe(1);
        } else {
          expect(r.state).toBe('unknown'); // a send cut off by the shutdown: for support, never resent
        }
      }
      expect(rows.rows).toHaveLength(300);
      expect(done).toBeGreaterThanOrEqual(290);
      const noReceipt = await t.owner<{ n: string }>(
        `SELECT count(*) AS n FROM effect WHERE state = 'done' AND (receipt IS NULL OR receipt = '')`,
      );
      expect(noReceipt.rows[0]!.n).toBe('0');
    },
  );
});
