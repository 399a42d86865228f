// A2, A5, Z3: "a person approved this replay before it sent", proved from a signed bundle alone, as
// docs/AUDIT.md walks an auditor through it. A four-eyes replay is requested by one operator, approved
// by another on the frozen set's hash (naming the status they saw), started and sent over SMTP; the
// run's bundle verifies against the log key and holds the request, the approval (who, which set, the
// version seen, when, the reason) and every send by the replay's executor, each send after the
// approval in the signed tree's order.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { auditBundleLines } from '@/lib/audit/export-bundle.ts';
import { newestHead } from '@/lib/audit/tree/api.ts';
import { signTreeHead } from '@/lib/audit/tree/signer.ts';
import { integrateAll } from '@/lib/audit/tree/store.ts';
import { keyIdOf } from '@/lib/sdk/audit/checkpoint-signature.ts';
import { formatVkey, verifierFor } from '@/lib/sdk/audit/signed-note.ts';
import { verifyExport } from '@/lib/sdk/audit/verify-export.ts';
import {
  approveReplay,
  getReplayProgress,
  installJobEngine,
  requestReplay,
  startReplay,
  startReplayWorker,
  type ReplayWorker,
} from '@/lib/replay/index.ts';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';
import { createSignerDb } from '../helpers/audit-signer.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { userActor } from '../helpers/factories.ts';
import { startTestSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.ts';
import { makeCampaign, smtpRegistry, until } from './replay-fixtures.ts';
import type { ProviderRegistry } from '@/lib/providers/registry.ts';

const ORIGIN = 'evidence.test/audit';
let t: TestDatabase;
let smtp: TestSmtpServer;
let worker: ReplayWorker;
let providers: ProviderRegistry;

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 20 });
  await installJobEngine(t.ownerUrl);
  smtp = await startTestSmtpServer();
  providers = smtpRegistry(smtp, { rateLimitPerSecond: 200 });
  worker = await startReplayWorker({
    appUrl: t.appUrl,
    db: t.db,
    providers,
    concurrency: 2,
    reconcileIntervalMs: 60_000,
  });
});

afterAll(async () => {
  await worker?.stop();
  await providers?.close();
  await smtp?.close();
});

type Row = Record<string, unknown> & { action: string; actor_id: string; at: string; leaf: { index: number } };

it('Z3, A2, A5: the bundle of a run proves a second person approved its replay, on the frozen set, before any send', async () => {
  const c = await makeCampaign(t.db, { not_sent: 3, failed: 2 });
  const [requester, approver] = [userActor('operator'), userActor('operator')];
  const req = await requestReplay(
    { db: t.db, actor: requester },
    { runId: c.runId, confirmCount: 5, reason: 'campaign crashed' },
  );
  await approveReplay(
    { db: t.db, actor: approver },
    { approvalRequestId: req.approvalRequestId!, setHash: req.setHash, seenStatus: 'open', reason: 'checked the list' },
  );
  await startReplay({ db: t.db, actor: requester }, { replayId: req.replayId, seenStatus: 'approved' });
  await until('the replay to complete', async () => {
    const p = await getReplayProgress({ db: t.db }, { replayId: req.replayId });
    return p.status === 'completed' ? p : null;
  });

  // The ledger signs a head over the trail; the auditor receives the run's bundle and the log key.
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const statePath = path.join(mkdtempSync(path.join(tmpdir(), 'approval-evidence-')), 'state');
  await integrateAll(t.db);
  expect((await signTreeHead((await createSignerDb(t)).db, { privateKey, origin: ORIGIN, statePath })).kind).toBe(
    'signed',
  );
  const head = { ...(await newestHead(t.db, { origin: ORIGIN, privateKey })), origin: ORIGIN };
  let text = '';
  for await (const line of auditBundleLines(t.db, { run: c.runId }, EVERY_WORKFLOW, head, {
    privateKey,
    keyId: keyIdOf(privateKey),
  }))
    text += line;
  expect(verifyExport(text, undefined, { logKey: formatVkey(verifierFor(ORIGIN, publicKey)) })).toMatchObject({
    ok: true,
    bundle: { coverage: `the filter {"run":"${c.runId}"}` },
  });

  // Step by step, as docs/AUDIT.md tells the auditor.
  const rows = text
    .trim()
    .split('\n')
    .slice(1, -1)
    .map((l) => JSON.parse(l) as Row);
  const request = rows.find((r) => r.action === 'replay.request' && r.subject_id === req.replayId)!;
  const approval = rows.find((r) => r.action === 'replay.approve' && r.subject_id === req.replayId)!;
  expect(request).toMatchObject({ actor_id: requester.id, reason: 'campaign crashed', outcome: 'ok' });
  expect(request.detail).toMatchObject({
    setHash: req.setHash,
    approvalRequestId: req.approvalRequestId,
    fourEyes: true,
  });
  expect(approval).toMatchObject({
    actor_id: approver.id,
    reason: 'checked the list',
    outcome: 'ok',
    after_state: 'approved',
  });
  expect(approval.detail).toEqual({
    approvalRequestId: req.approvalRequestId,
    setHash: req.setHash,
    seenStatus: 'open',
    requestedById: requester.id,
    requestedAt: expect.any(String),
  });
  expect(approval.actor_id).not.toBe(request.actor_id);
  const sends = rows.filter((r) => r.actor_id === `replay:${req.replayId}` && r.action === 'effect.claim');
  expect(sends.length).toBe(5);
  for (const s of sends) {
    expect(s.leaf.index).toBeGreaterThan(approval.leaf.index);
    expect(s.at > approval.at).toBe(true);
  }
});
