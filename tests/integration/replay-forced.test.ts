import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerError } from '@/lib/ledger/index.ts';
import {
  approveReplay,
  cancelReplay,
  getReplayProgress,
  getReplayReport,
  installJobEngine,
  pauseReplay,
  previewReplay,
  requestReplay,
  resumeReplay,
  startBoss,
  startReplay,
  startReplayWorker,
  type ReplayWorker,
} from '@/lib/replay/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { userActor } from '../helpers/factories.ts';
import { startTestSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.ts';
import { makeCampaign, smtpRegistry, until } from './replay-fixtures.ts';
import type PgBoss from 'pg-boss';
import type { ProviderRegistry } from '@/lib/providers/registry.ts';

let t: TestDatabase;
let smtp: TestSmtpServer;
let worker: ReplayWorker;
let sender: PgBoss;
let providers: ProviderRegistry;

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 30 });
  await installJobEngine(t.ownerUrl);
  smtp = await startTestSmtpServer();
  providers = smtpRegistry(smtp, { rateLimitPerSecond: 200 });
  worker = await startReplayWorker({
    appUrl: t.appUrl,
    db: t.db,
    providers,
    concurrency: 3,
    reconcileIntervalMs: 60_000,
  });
  sender = await startBoss(t.appUrl);
});

afterAll(async () => {
  await worker?.stop();
  await sender?.stop({ graceful: false });
  await providers?.close();
  await smtp?.close();
});

const opA = userActor('operator');
const opB = userActor('operator');
const ctx = (actor = opA) => ({ db: t.db, actor, jobs: sender });

async function expectError(p: Promise<unknown>, code: string, pattern?: RegExp) {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(LedgerError);
  expect((e as LedgerError).code).toBe(code);
  if (pattern) expect((e as LedgerError).message).toMatch(pattern);
}

async function finished(replayId: string) {
  return until(`replay ${replayId} to complete`, async () => {
    const p = await getReplayProgress({ db: t.db }, { replayId });
    return p.status === 'completed' ? p : null;
  });
}

describe('forced replay over SMTP', () => {
  it('F1 F2 Z3 F4: preview counts per state; a four-eyes replay sends exactly to the not-sent, failed and awaiting targets, counted at the SMTP server', async () => {
    const c = await makeCampaign(t.db, {
      not_sent: 10,
      failed: 5,
      awaiting_claim: 3,
      done: 6,
      revoked: 4,
      unknown: 4,
      stuck: 4,
      in_flight: 4,
    });
    const preview = await previewReplay({ db: t.db }, { runId: c.runId, limit: 1000 });
    expect(preview.counts).toEqual({
      not_sent: 10,
      awaiting_claim: 3,
      failed: 5,
      in_flight: 4,
      done: 6,
      unknown: 4,
      revoked: 4,
      stuck: 4,
    });
    expect(preview.total).toBe(40);
    expect(preview.willSend).toBe(18);
    expect(preview.fourEyes).toBe(true);
    const eligible = new Set(
      c.targets.filter((x) => ['not_sent', 'failed', 'awaiting_claim'].includes(x.state)).map((x) => x.target),
    );
    expect(new Set(preview.items.filter((i) => i.willSend).map((i) => i.target))).toEqual(eligible);
    expect(preview.items.find((i) => i.state === 'unknown')?.skipReason).toMatch(/support must resolve/);
    expect(preview.items.find((i) => i.state === 'done')?.changedBy).toBe(c.runtime.label);
    const willSendPage = await previewReplay({ db: t.db }, { runId: c.runId, filter: 'will_send', limit: 7 });
    expect(willSendPage.items).toHaveLength(7);
    expect(willSendPage.nextCursor).not.toBeNull();

    await expectError(
      requestReplay(ctx(), { runId: c.runId, confirmCount: 17, reason: 'crashed campaign' }),
      'conflict',
      /confirmed 17 targets but 18/,
    );
    await expectError(
      requestReplay(ctx(userActor('support')), { runId: c.runId, confirmCount: 18, reason: 'x' }),
      'forbidden',
    );
    const req = await requestReplay(ctx(), {
      runId: c.runId,
      confirmCount: 18,
      setHash: preview.setHash,
      reason: 'crashed campaign',
    });
    expect(req.status).toBe('awaiting_approval');
    expect(req.approvalRequestId).not.toBeNull();
    await expectError(startReplay(ctx(), { replayId: req.replayId }), 'conflict', /awaiting_approval/);
    await expectError(
      approveReplay(ctx(opA), { approvalRequestId: req.approvalRequestId!, setHash: req.setHash }),
      'forbidden',
      /Z3/,
    );
    await expectError(
      approveReplay(ctx(opB), { approvalRequestId: req.approvalRequestId!, setHash: 'f'.repeat(64) }),
      'conflict',
      /frozen set/,
    );

    // F4: between confirmation and execution the runtime sends one target and another fails again.
    const changedDone = c.targets.find((x) => x.state === 'not_sent')!;
    const { claimEffect, completeEffect, failEffect } = await import('@/lib/ledger/index.ts');
    const cl = await claimEffect(
      { db: t.db, actor: c.runtime },
      {
        runId: c.runId,
        tool: c.tool,
        action: 'campaign_welcome',
        recordId: changedDone.recordId,
        target: changedDone.target,
      },
    );
    if (!cl.claimed) throw new Error('claim');
    await completeEffect(
      { db: t.db, actor: c.runtime },
      { key: cl.key, epoch: cl.epoch, receipt: '<runtime@example.com>' },
    );
    const changedFailed = c.targets.find((x) => x.state === 'failed')!;
    const cl2 = await claimEffect(
      { db: t.db, actor: c.runtime },
      {
        runId: c.runId,
        tool: c.tool,
        action: 'campaign_welcome',
        recordId: changedFailed.recordId,
        target: changedFailed.target,
      },
    );
    if (!cl2.claimed) throw new Error('claim');
    await failEffect({ db: t.db, actor: c.runtime }, { key: cl2.key, epoch: cl2.epoch, evidence: { smtpStatus: 550 } });

    const approved = await approveReplay(ctx(opB), { approvalRequestId: req.approvalRequestId!, setHash: req.setHash });
    expect(approved.status).toBe('approved');
    const started = await startReplay(ctx(opA), { replayId: req.replayId });
    expect(started.status).toBe('running');
    const done = await finished(req.replayId);
    expect(done).toMatchObject({ total: 18, sent: 16, skipped: 2, failed: 0, unknown: 0, remaining: 0 });

    const counts = smtp.countByRecipient();
    for (const x of c.targets) {
      const expected = eligible.has(x.target) && x !== changedDone && x !== changedFailed ? 1 : 0;
      expect(counts.get(x.target) ?? 0, `${x.state} ${x.target}`).toBe(expected);
    }
    const report = await getReplayReport({ db: t.db }, { replayId: req.replayId, limit: 1000 });
    expect(
      report.items
        .filter((i) => i.outcome === 'skipped')
        .map((i) => i.target)
        .sort(),
    ).toEqual([changedDone.target, changedFailed.target].sort());
    expect(report.skippedBecause).toEqual([{ reason: 'changed after confirmation', count: 2 }]);
    expect(report.exactlyOnceBefore).toMatchObject({ exactlyOnce: 6, approved: 40 });
    expect(report.exactlyOnceAfter).toMatchObject({ exactlyOnce: 6 + 1 + 16, approved: 40 });
    // S2: every sent key is done with the receipt the server gave (Message-ID and queue id).
    const rows = await t.owner<{ receipt: string }>(
      `SELECT e.receipt FROM effect e JOIN replay_item ri ON ri.key = e.key WHERE ri.replay_id = $1 AND ri.outcome = 'sent'`,
      [req.replayId],
    );
    const atServer = new Set(smtp.messages.map((m) => `${m.messageId} queue=${m.queueId}`));
    expect(rows.rows).toHaveLength(16);
    for (const r of rows.rows) expect(atServer.has(r.receipt)).toBe(true);
    // R1: the raw SMTP reply is stored with each attempt.
    const raw = await t.owner<{ n: string }>(
      `SELECT count(*) AS n FROM attempt a JOIN replay_item ri ON ri.key = a.key WHERE ri.replay_id = $1 AND a.response_status = 250 AND convert_from(a.response_body, 'UTF8') LIKE '250 OK: queued as %'`,
      [req.replayId],
    );
    expect(Number(raw.rows[0]!.n)).toBe(16);
  });

  it('Z3: an approval after expiry is refused and the replay expires', async () => {
    const c = await makeCampaign(t.db, { not_sent: 3 });
    const req = await requestReplay(ctx(), { runId: c.runId, confirmCount: 3, reason: 'retry' });
    await t.owner(`UPDATE approval_request SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      req.approvalRequestId,
    ]);
    const r = await approveReplay(ctx(opB), { approvalRequestId: req.approvalRequestId!, setHash: req.setHash });
    expect(r.status).toBe('expired');
    expect((await getReplayProgress({ db: t.db }, { replayId: req.replayId })).status).toBe('expired');
    await expectError(startReplay(ctx(), { replayId: req.replayId }), 'conflict');
  });

  it('F3: two operators confirming at once and a runtime sending at the same time: nobody gets two', async () => {
    const c = await makeCampaign(t.db, { not_sent: 60, failed: 20 }, { fourEyesReplay: false });
    const [a, b] = await Promise.all([
      requestReplay(ctx(opA), { runId: c.runId, confirmCount: 80, reason: 'operator A' }),
      requestReplay(ctx(opB), { runId: c.runId, confirmCount: 80, reason: 'operator B' }),
    ]);
    expect(a.status).toBe('approved');
    expect(b.status).toBe('approved');
    const { claimEffect, completeEffect } = await import('@/lib/ledger/index.ts');
    const provider = providers.get('smtp');
    const runtimeSends = async () => {
      for (const x of c.targets) {
        const cl = await claimEffect(
          { db: t.db, actor: c.runtime },
          { runId: c.runId, tool: c.tool, action: 'campaign_welcome', recordId: x.recordId, target: x.target },
        );
        if (!cl.claimed) continue;
        const raw = await provider.send({
          key: cl.key,
          epoch: cl.epoch,
          idempotencyKey: cl.idempotencyKey,
          target: cl.target,
          payload: { subject: 'hi', text: 'runtime' },
        });
        const v = provider.classify(raw);
        if (v.outcome === 'done')
          await completeEffect({ db: t.db, actor: c.runtime }, { key: cl.key, epoch: cl.epoch, receipt: v.receipt });
      }
    };
    await Promise.all([
      startReplay(ctx(opA), { replayId: a.replayId }),
      startReplay(ctx(opB), { replayId: b.replayId }),
      runtimeSends(),
    ]);
    const [pa, pb] = await Promise.all([finished(a.replayId), finished(b.replayId)]);
    const counts = smtp.countByRecipient();
    for (const x of c.targets) expect(counts.get(x.target), x.target).toBe(1);
    const toCampaign = smtp.messages.filter((m) => m.to[0]!.endsWith(c.targets[0]!.target.split('@')[1]!)).length;
    expect(toCampaign).toBe(80);
    // Every target went out once: through A, through B or through the runtime; the rest was skipped.
    expect(pa.sent + pb.sent).toBeLessThanOrEqual(80);
    expect(pa.sent + pa.skipped).toBe(80);
    expect(pb.sent + pb.skipped).toBe(80);
  });

  it('F5: a start whose job queueing failed after the commit still runs: the worker sweep queues the remaining items', async () => {
    const c = await makeCampaign(t.db, { not_sent: 5 }, { fourEyesReplay: false });
    const r = await requestReplay(ctx(), { runId: c.runId, confirmCount: 5, reason: 'engine hiccup' });
    const started = await startReplay(
      {
        db: t.db,
        actor: opA,
        jobs: {
          insert: async () => {
            throw new Error('job engine unreachable');
          },
        },
      },
      { replayId: r.replayId },
    );
    expect(started).toMatchObject({ status: 'running', queued: false, chunks: 0 });
    const done = await finished(r.replayId);
    expect(done.sent).toBe(5);
    for (const x of c.targets) expect(smtp.countByRecipient().get(x.target)).toBe(1);
  });

  it('F5: pause stops sending, resume finishes, cancel leaves the rest unsent', async () => {
    const slow = smtpRegistry(smtp, { rateLimitPerSecond: 15 });
    const c = await makeCampaign(t.db, { not_sent: 60 }, { fourEyesReplay: false });
    // This replay's sends go through a second, slower worker on the same queue (rate limit per provider).
    await worker.stop();
    worker = await startReplayWorker({
      appUrl: t.appUrl,
      db: t.db,
      providers: slow,
      concurrency: 2,
      reconcileIntervalMs: 60_000,
    });
    const r = await requestReplay(ctx(), { runId: c.runId, confirmCount: 60, reason: 'slow one' });
    const t0 = Date.now();
    await startReplay(ctx(), { replayId: r.replayId });
    await until('some sends', async () => (await getReplayProgress({ db: t.db }, { replayId: r.replayId })).sent >= 5);
    await pauseReplay(ctx(), { replayId: r.replayId, reason: 'checking something' });
    await until(
      'chunk handlers to stop',
      async () =>
        (
          await t.owner<{ n: string }>(
            `SELECT count(*) AS n FROM pgboss.job WHERE state IN ('active','created','retry') AND data->>'replayId' = $1`,
            [r.replayId],
          )
        ).rows[0]!.n === '0',
    );
    const paused = await getReplayProgress({ db: t.db }, { replayId: r.replayId });
    expect(paused.status).toBe('paused');
    expect(paused.sent).toBeLessThan(60);
    const atPause = smtp.countByRecipient();
    expect(c.targets.filter((x) => atPause.has(x.target)).length).toBe(paused.sent);
    await resumeReplay(ctx(), { replayId: r.replayId });
    const done = await finished(r.replayId);
    expect(done.sent).toBe(60);
    const elapsed = (Date.now() - t0) / 1000;
    expect(60 / elapsed).toBeLessThan(15 * 1.3); // the per-provider rate limit held
    const counts = smtp.countByRecipient();
    for (const x of c.targets) expect(counts.get(x.target)).toBe(1);

    const c2 = await makeCampaign(t.db, { not_sent: 60 }, { fourEyesReplay: false });
    const r2 = await requestReplay(ctx(), { runId: c2.runId, confirmCount: 60, reason: 'to cancel' });
    await startReplay(ctx(), { replayId: r2.replayId });
    await until('some sends', async () => (await getReplayProgress({ db: t.db }, { replayId: r2.replayId })).sent >= 3);
    await expectError(cancelReplay(ctx(), { replayId: r2.replayId, reason: '' }), 'validation');
    await cancelReplay(ctx(), { replayId: r2.replayId, reason: 'wrong template' });
    await until(
      'chunk handlers to stop',
      async () =>
        (
          await t.owner<{ n: string }>(
            `SELECT count(*) AS n FROM pgboss.job WHERE state IN ('active','created','retry') AND data->>'replayId' = $1`,
            [r2.replayId],
          )
        ).rows[0]!.n === '0',
    );
    const report = await getReplayReport({ db: t.db }, { replayId: r2.replayId, limit: 1000 });
    expect(report.status).toBe('cancelled');
    const sentTo = smtp.countByRecipient();
    const delivered = c2.targets.filter((x) => sentTo.has(x.target)).length;
    expect(delivered).toBe(report.sent);
    expect(report.items.filter((i) => i.outcome === 'not_sent_cancelled').length).toBe(
      60 - report.sent - report.skipped - report.failed - report.unknown,
    );
    await expectError(resumeReplay(ctx(), { replayId: r2.replayId }), 'conflict');
    await slow.close();
  });
});
