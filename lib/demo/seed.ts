// Seeding helpers for `npm start`: register the demo tool, create the demo runtime key, and run the
// crashed campaign in process through the SDK's direct transport (the same operations as the API).
import { appendAudit } from '../audit/append.ts';
import type { Db } from '../db/client.ts';
import type { Actor } from '../core/actor.ts';
import { approvePlan } from '../ledger/commands/approve-plan.ts';
import { createRuntimeKey } from '../runtime-keys/index.ts';
import { directTransport } from '../api/direct-transport.ts';
import { DEMO_TOOL, DEMO_WORKFLOW, runDemoCampaign, type DemoCampaignResult } from './campaign.ts';

const SYSTEM: Actor = { kind: 'system', id: 'seed', label: 'demo seed' };

/** Registers the demo tool definition if it is missing (audited as a system action). */
export async function ensureDemoTool(db: Db): Promise<void> {
  const existing = await db.toolDefinition.findUnique({ where: { name: DEMO_TOOL.name } });
  if (existing) return;
  await db.$transaction(async (tx) => {
    const tool = await tx.toolDefinition.create({
      data: { ...DEMO_TOOL, actions: [...DEMO_TOOL.actions], generatedInputs: [...DEMO_TOOL.generatedInputs] },
    });
    await appendAudit(tx, {
      chain: `tool:${tool.name}`,
      actor: SYSTEM,
      action: 'tool.register',
      subjectType: 'tool',
      subjectId: tool.name,
      after: 'registered',
      detail: { ...DEMO_TOOL },
    });
  });
}

export interface SeedDemoOptions {
  db: Db;
  /** An operator who approves the plan before the agent sends (P2: not its author). Omitted: the plan stays submitted. */
  approver?: Extract<Actor, { kind: 'user' }>;
  /** A running sandbox to send through; omitted: one is started for the campaign and stopped after. */
  sandboxUrl?: string;
  log?: (line: string) => void;
}

/**
 * Registers the tool, creates the runtime key "demo-agent" (scoped to the demo workflow) and runs
 * the crashed campaign as that runtime. Returns the campaign result and the key's token (shown once).
 */
export async function seedDemoCampaign(
  options: SeedDemoOptions,
): Promise<DemoCampaignResult & { runtimeKey: { id: string; token: string } }> {
  const { db } = options;
  await ensureDemoTool(db);
  const key = await createRuntimeKey({ db, actor: SYSTEM }, { name: 'demo-agent', workflows: [DEMO_WORKFLOW] });
  const actor: Actor = { kind: 'runtime', id: key.id, label: `runtime:${key.name}`, workflows: key.workflows };
  const result = await runDemoCampaign({
    transport: directTransport({ db, actor, request: { userAgent: 'effect-ledger demo agent' } }),
    sandboxUrl: options.sandboxUrl,
    log: options.log,
    approve: options.approver
      ? async (plan) => {
          await approvePlan(
            { db, actor: options.approver! },
            { planId: plan.planId, itemsHash: plan.itemsHash, reason: 'demo: approved the welcome campaign' },
          );
        }
      : undefined,
  });
  if (result.crashedAt) {
    // What the runtime's supervisor records when its process died mid-run (demo: simulated).
    await db.$transaction(async (tx) => {
      await tx.run.update({ where: { id: result.runId }, data: { status: 'crashed', updatedAt: new Date() } });
      await appendAudit(tx, {
        chain: `run:${result.runId}`,
        actor: SYSTEM,
        action: 'run.crashed',
        subjectType: 'run',
        subjectId: result.runId,
        runId: result.runId,
        before: 'running',
        after: 'crashed',
        reason: 'demo: the agent process died after the provider call for one recipient',
        detail: { crashedAt: result.crashedAt, notStarted: result.notStarted },
      });
    });
  }
  return { ...result, runtimeKey: { id: key.id, token: key.token } };
}
