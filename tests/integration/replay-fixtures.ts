// The demo's crashed campaign for replay tests: a tool on a named provider, a run whose plan was
// approved, and targets seeded into every state through the ledger's own commands.
import { randomUUID } from 'node:crypto';
import type { Db } from '@/lib/db/client.ts';
import {
  approvePlan,
  claimEffect,
  completeEffect,
  failEffect,
  markStuck,
  markUnknown,
  resolveUnknown,
  revokeEffect,
  submitPlan,
  type Actor,
} from '@/lib/ledger/index.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import type { TestSmtpServer } from '../helpers/smtp-server.ts';
import { makeRun, runtimeActor, suffix, userActor } from '../helpers/factories.ts';

export type SeedState =
  'not_sent' | 'failed' | 'awaiting_claim' | 'done' | 'revoked' | 'unknown' | 'stuck' | 'in_flight';

export interface Campaign {
  runId: string;
  tool: string;
  runtime: Actor;
  author: Actor;
  targets: { target: string; recordId: string; state: SeedState; key?: string }[];
}

export function smtpRegistry(
  server: TestSmtpServer,
  extra: { rateLimitPerSecond?: number; settleWindowSeconds?: number; lookup?: boolean } = {},
) {
  return new ProviderRegistry({
    smtp: {
      type: 'smtp',
      host: '127.0.0.1',
      port: server.port,
      ignoreTLS: true,
      from: 'campaigns@example.com',
      maxConnections: 4,
      timeoutSeconds: 5,
      ...(extra.lookup === false ? {} : { lookupUrl: server.lookupUrl }),
      ...(extra.rateLimitPerSecond ? { rateLimitPerSecond: extra.rateLimitPerSecond } : {}),
      ...(extra.settleWindowSeconds !== undefined ? { settleWindowSeconds: extra.settleWindowSeconds } : {}),
    },
  });
}

export async function makeCampaign(
  db: Db,
  seed: Partial<Record<SeedState, number>>,
  options: {
    leaseSeconds?: number;
    settleWindowSeconds?: number;
    fourEyesReplay?: boolean;
    provider?: string;
    domain?: string;
  } = {},
): Promise<Campaign> {
  const tool = await db.toolDefinition.create({
    data: {
      name: `send_email_${suffix()}`,
      actions: ['campaign_welcome'],
      targetType: 'email',
      provider: options.provider ?? 'smtp',
      generatedInputs: ['subject', 'body'],
      supportsIdempotencyKey: true,
      supportsReceiptLookup: true,
      leaseSeconds: options.leaseSeconds ?? 300,
      settleWindowSeconds: options.settleWindowSeconds ?? 60,
      fourEyesReplay: options.fourEyesReplay ?? true,
    },
  });
  const run = await makeRun(db);
  const runtime = runtimeActor();
  const domain = options.domain ?? `c${suffix()}.example.com`;
  const targets: Campaign['targets'] = [];
  let i = 0;
  for (const [state, n] of Object.entries(seed) as [SeedState, number][]) {
    for (let j = 0; j < n; j++, i++) targets.push({ target: `user${i}@${domain}`, recordId: `customer-${i}`, state });
  }
  const author = runtime;
  const plan = await submitPlan(
    { db, actor: author },
    {
      runId: run.runId,
      items: targets.map((t) => ({
        tool: tool.name,
        action: 'campaign_welcome',
        recordId: t.recordId,
        target: t.target,
      })),
    },
  );
  await approvePlan({ db, actor: userActor('operator') }, { planId: plan.planId, itemsHash: plan.itemsHash });
  const operator = userActor('operator');
  const support = userActor('support');
  const ctx = { db, actor: runtime };
  const seedOne = async (t: Campaign['targets'][number]) => {
    if (t.state === 'not_sent') return;
    const c = await claimEffect(ctx, {
      runId: run.runId,
      tool: tool.name,
      action: 'campaign_welcome',
      recordId: t.recordId,
      target: t.target,
    });
    if (!c.claimed) throw new Error('seed claim lost');
    t.key = c.key;
    const ref = { key: c.key, epoch: c.epoch };
    switch (t.state) {
      case 'done':
        return void (await completeEffect(ctx, { ...ref, receipt: `<seed-${randomUUID()}@example.com> queue=SEED` }));
      case 'failed':
        return void (await failEffect(ctx, { ...ref, evidence: { smtpStatus: 550, reply: 'mailbox unavailable' } }));
      case 'revoked':
        await completeEffect(ctx, { ...ref, receipt: `<seed-${randomUUID()}@example.com>` });
        return void (await revokeEffect({ db, actor: operator }, { ...ref, reason: 'customer asked' }));
      case 'unknown':
        return void (await markUnknown(ctx, { ...ref, evidence: { why: 'timeout after DATA' } }));
      case 'stuck':
        return void (await markStuck(ctx, { ...ref, evidence: { why: 'one-shot token lost' } }));
      case 'awaiting_claim':
        await markUnknown(ctx, { ...ref, evidence: { why: 'timeout' } });
        return void (await resolveUnknown(
          { db, actor: support },
          { ...ref, outcome: 'not_sent', reason: 'provider log shows nothing' },
        ));
      case 'in_flight':
        return;
    }
  };
  for (let k = 0; k < targets.length; k += 20) await Promise.all(targets.slice(k, k + 20).map(seedOne));
  return { runId: run.runId, tool: tool.name, runtime, author, targets };
}

/** Polls a condition (not a sleep used as synchronization: it waits for an observable state). */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 60_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
