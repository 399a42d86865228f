// Demo data for the browser journeys, written through the lib commands (the same paths the API
// and the console use), so every row carries its audit entries.
import type { Db } from '@/lib/db/client.ts';
import { insertUser } from '@/lib/auth/users.ts';
import { requestBump } from '@/lib/approvals/request-bump.ts';
import {
  claimEffect,
  completeEffect,
  createRun,
  failEffect,
  markUnknown,
  approvePlan,
  recordResponse,
  submitPlan,
  type Actor,
} from '@/lib/ledger/index.ts';

export const PASSWORD = 'correct-horse-battery-staple';
export const USERS = {
  admin: 'admin@example.com',
  operatorA: 'olivia.operator@example.com',
  operatorB: 'oscar.operator@example.com',
  support: 'sam.support@example.com',
  auditor: 'ada.auditor@example.com',
} as const;

export interface Seeded {
  users: Record<keyof typeof USERS, { id: string; email: string; sessionVersion: number }>;
  pendingRunId: string;
  liveRunId: string;
  unknownTarget: string;
  doneTarget: string;
  bumpTarget: string;
}

const system: Actor = { kind: 'system', id: 'seed', label: 'demo seed' };
const runtime: Actor = { kind: 'runtime', id: 'demo-runtime', label: 'campaign-runner', workflows: ['*'] };
const reconciler: Actor = { kind: 'reconciler', id: 'reconciler', label: 'reconciler' };

export async function seed(db: Db): Promise<Seeded> {
  const users = {} as Seeded['users'];
  const roles = {
    admin: 'admin',
    operatorA: 'operator',
    operatorB: 'operator',
    support: 'support',
    auditor: 'auditor',
  } as const;
  for (const [k, email] of Object.entries(USERS) as [keyof typeof USERS, string][]) {
    const u = await insertUser(
      db,
      { email, name: email.split('@')[0]!.replace('.', ' '), role: roles[k], password: PASSWORD },
      system,
    );
    users[k] = { id: u.id, email, sessionVersion: u.sessionVersion };
  }
  await db.toolDefinition.create({
    data: {
      name: 'send_email',
      actions: ['campaign_welcome', 'receipt'],
      targetType: 'email',
      provider: 'sandbox',
      generatedInputs: ['subject', 'body'],
      supportsIdempotencyKey: true,
      supportsReceiptLookup: true,
    },
  });

  // A run whose plan awaits approval; three targets were already claimed before the crash.
  const a = await createRun({ db, actor: runtime }, { workflow: 'spring_campaign', triggerId: 'evt_spring_2026_001' });
  const aTargets = [
    'ana@example.com',
    'bruno@example.com',
    'chen@example.com',
    'dana@example.com',
    'eli@example.com',
    'fatima@example.com',
  ];
  await submitPlan(
    { db, actor: runtime },
    {
      runId: a.runId,
      items: aTargets.map((t, i) => ({
        tool: 'send_email',
        action: 'campaign_welcome',
        recordId: `cust_${100 + i}`,
        target: t,
      })),
    },
  );
  for (const [i, t] of aTargets.slice(0, 3).entries()) {
    const c = await claimEffect(
      { db, actor: runtime },
      { runId: a.runId, tool: 'send_email', action: 'campaign_welcome', recordId: `cust_${100 + i}`, target: t },
    );
    if (c.claimed && i === 2) {
      // The crash: the call went out, no receipt came back; the reconciler's lookup found nothing yet.
      await markUnknown(
        { db, actor: reconciler },
        {
          key: c.key,
          evidence: { lookup: 'no receipt found', provider: 'sandbox', note: 'process died after the call' },
        },
      );
    }
    if (c.claimed && i < 2) {
      await recordResponse(
        { db, actor: runtime },
        {
          attemptId: c.attemptId,
          status: 200,
          headers: [
            ['content-type', 'application/json'],
            ['x-request-id', `req_${i}`],
          ],
          body: new TextEncoder().encode(JSON.stringify({ id: `msg_a${i}`, status: 'queued' })),
        },
      );
      await completeEffect({ db, actor: runtime }, { key: c.key, receipt: `msg_a${i}` });
    }
  }

  // A run with an approved plan and every state.
  const b = await createRun({ db, actor: runtime }, { workflow: 'receipts', triggerId: 'evt_order_77812' });
  const bTargets = [
    'gus@example.com',
    'hana@example.com',
    'ivan@example.com',
    'jo@example.com',
    'kim@example.com',
    'lee@example.com',
  ];
  const plan = await submitPlan(
    { db, actor: runtime },
    {
      runId: b.runId,
      items: bTargets.map((t, i) => ({ tool: 'send_email', action: 'receipt', recordId: `order_${i}`, target: t })),
    },
  );
  await approvePlan(
    { db, actor: { kind: 'user', id: users.operatorB.id, label: users.operatorB.email, role: 'operator' } },
    { planId: plan.planId, itemsHash: plan.itemsHash, reason: 'list checked against the CRM export' },
  );
  const claim = (i: number, target = bTargets[i]!) =>
    claimEffect(
      { db, actor: runtime },
      { runId: b.runId, tool: 'send_email', action: 'receipt', recordId: `order_${i}`, target },
    );
  let doneKey = '';
  let bumpKey = '';
  for (const i of [0, 1]) {
    const c = await claim(i);
    if (!c.claimed) continue;
    await recordResponse(
      { db, actor: runtime },
      {
        attemptId: c.attemptId,
        status: 202,
        headers: [['content-type', 'application/json']],
        body: new TextEncoder().encode(`{"id":"msg_b${i}","accepted":true}`),
      },
    );
    await completeEffect({ db, actor: runtime }, { key: c.key, receipt: `msg_b${i}` });
    if (i === 0) doneKey = c.key;
    else bumpKey = c.key;
  }
  const u = await claim(2);
  if (u.claimed) {
    await recordResponse(
      { db, actor: runtime },
      {
        attemptId: u.attemptId,
        status: 504,
        headers: [['content-type', 'text/plain']],
        body: new TextEncoder().encode('upstream timed out'),
      },
    );
    await markUnknown(
      { db, actor: reconciler },
      {
        key: u.key,
        evidence: { lookup: 'miss after settle window', provider: 'sandbox', checkedAt: new Date().toISOString() },
      },
    );
  }
  const f = await claim(3);
  if (f.claimed) {
    await recordResponse(
      { db, actor: runtime },
      {
        attemptId: f.attemptId,
        status: 422,
        headers: [['content-type', 'application/json']],
        body: new TextEncoder().encode('{"error":"mailbox does not exist"}'),
      },
    );
    await failEffect(
      { db, actor: runtime },
      { key: f.key, evidence: { status: 422, error: 'mailbox does not exist' } },
    );
  }
  // Sent but not in the plan.
  await claimEffect(
    { db, actor: runtime },
    { runId: b.runId, tool: 'send_email', action: 'receipt', recordId: 'order_99', target: 'stray@example.com' },
  );
  // An open four-eyes request, waiting for a second operator.
  await requestBump(
    { db, actor: { kind: 'user', id: users.operatorA.id, label: users.operatorA.email, role: 'operator' } },
    { keys: [doneKey], reason: 'Receipt template fixed; resend to this customer' },
  );
  void bumpKey;
  return {
    users,
    pendingRunId: a.runId,
    liveRunId: b.runId,
    unknownTarget: bTargets[2]!,
    doneTarget: bTargets[0]!,
    bumpTarget: bTargets[1]!,
  };
}
