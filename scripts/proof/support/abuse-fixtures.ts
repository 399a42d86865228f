// Fresh objects for the abuse parts, made through the product's own commands (the same shapes the
// authorization matrix in tests/integration/console-authz.test.ts builds): a submitted plan, a done or
// unknown key, an open four-eyes bump request, a forced replay in a given status.
import { randomUUID } from 'node:crypto';
import { makeRun, makeTool, suffix } from '@/tests/helpers/factories.ts';
import { approvePlan, claimEffect, completeEffect, markUnknown, submitPlan } from '@/lib/ledger/index.ts';
import { requestBump } from '@/lib/approvals/request-bump.ts';
import { requestReplay, startReplay, pauseReplay } from '@/lib/replay/index.ts';
import type { Actor } from '@/lib/core/actor.ts';
import { SYSTEM, type AbuseEnv, type ProofUser } from './abuse-env.ts';

export const NO_JOBS = { insert: async () => undefined };
const RUNTIME: Actor = { kind: 'runtime', id: 'proof-runtime', label: 'proof runtime', workflows: ['*'] };

export function operatorActor(u: ProofUser): Actor & { kind: 'user' } {
  return { kind: 'user', id: u.id, label: u.email, role: u.role };
}

export class Fixtures {
  /** `workflow`: the workflow every run this instance makes belongs to (a fresh one per run when absent). */
  constructor(
    private readonly env: AbuseEnv,
    private readonly workflow?: string,
  ) {}

  private get db() {
    return this.env.db;
  }

  /** The other operator: requester of four-eyes requests, approver of plans. */
  private get requester() {
    return operatorActor(this.env.users.operator2);
  }

  async tool(overrides: Parameters<typeof makeTool>[1] = {}) {
    return makeTool(this.db, overrides);
  }

  async key(state: 'done' | 'unknown' = 'done', setup: { tool?: string; runId?: string; target?: string } = {}) {
    const tool = setup.tool ?? (await makeTool(this.db)).name;
    const runId = setup.runId ?? (await makeRun(this.db, this.workflow)).runId;
    const c = await claimEffect(
      { db: this.db, actor: RUNTIME },
      {
        runId,
        tool,
        action: 'receipt',
        recordId: `r-${suffix()}`,
        target: setup.target ?? `x-${suffix()}@example.com`,
      },
    );
    if (!c.claimed) throw new Error('fixture claim lost');
    if (state === 'done')
      await completeEffect({ db: this.db, actor: RUNTIME }, { key: c.key, receipt: `msg_${suffix()}` });
    else
      await markUnknown({ db: this.db, actor: { kind: 'reconciler', id: 'rec', label: 'reconciler' } }, { key: c.key });
    return { key: c.key, runId, tool, attemptId: c.attemptId };
  }

  async submittedPlan(targets = 1) {
    const tool = await makeTool(this.db);
    const run = await makeRun(this.db, this.workflow);
    const items = Array.from({ length: targets }, () => ({
      tool: tool.name,
      action: 'receipt',
      recordId: `r-${suffix()}`,
      target: `p-${suffix()}@example.com`,
    }));
    const plan = await submitPlan({ db: this.db, actor: SYSTEM }, { runId: run.runId, items });
    return { ...plan, runId: run.runId, tool: tool.name };
  }

  async bumpRequest() {
    const { key } = await this.key('done');
    const r = await requestBump(
      { db: this.db, actor: this.requester },
      { keys: [key], reason: 'resend after a template fix' },
    );
    if (r.mode !== 'requested') throw new Error('expected a four-eyes request');
    return { ...r, key };
  }

  async approvedRun(fourEyesReplay = true) {
    const tool = await makeTool(this.db);
    if (!fourEyesReplay)
      await this.db.toolDefinition.update({ where: { name: tool.name }, data: { fourEyesReplay: false } });
    const run = await makeRun(this.db, this.workflow);
    const plan = await submitPlan(
      { db: this.db, actor: SYSTEM },
      {
        runId: run.runId,
        items: [{ tool: tool.name, action: 'receipt', recordId: 'r', target: `rp-${suffix()}@example.com` }],
      },
    );
    await approvePlan(
      { db: this.db, actor: this.requester },
      { planId: plan.planId, itemsHash: plan.itemsHash, reason: 'checked' },
    );
    return run.runId;
  }

  async replay(status: 'awaiting_approval' | 'approved' | 'running' | 'paused') {
    const runId = await this.approvedRun(status === 'awaiting_approval');
    const ctx = { db: this.db, actor: this.requester, jobs: NO_JOBS };
    const r = await requestReplay(ctx, { runId, confirmCount: 1, reason: 'crashed run' });
    if (status === 'running' || status === 'paused') await startReplay(ctx, { replayId: r.replayId });
    if (status === 'paused') await pauseReplay(ctx, { replayId: r.replayId });
    return { ...r, runId };
  }

  async runtimeKeyRow() {
    return this.db.runtimeKey.create({
      data: { name: `k-${suffix()}`, prefix: suffix() + suffix(), secretHash: randomUUID(), workflows: ['*'] },
    });
  }
}
