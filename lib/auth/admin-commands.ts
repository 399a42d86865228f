// Admin commands for runtime API keys (Z6) and tool definitions. Each writes its row and its audit
// entry in one transaction. Runtime keys are made by lib/runtime-keys (secret shown once, SHA-256 stored).
import { z } from 'zod';
import { appendAudit } from '../audit/append.ts';
import type { Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../core/actor.ts';
import * as keys from '../runtime-keys/index.ts';
import { forgetTool } from '../ledger/index.ts';
import { invalid } from '../core/errors.ts';
import { parseInput } from '../ledger/validate.ts';
import { reasonField } from '@/lib/ledger/fields.ts';

interface Ctx {
  db: Db;
  actor: Actor;
  request?: RequestMeta;
}

const csv = (max: number) =>
  z
    .union([z.array(z.string()), z.string()])
    .transform((v) => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(z.string().min(1).max(128)).max(max));

export const createRuntimeKeyInput = z.strictObject({
  name: z.string().trim().min(1, 'a name is required').max(200),
  workflows: csv(100).pipe(z.array(z.string()).min(1, 'scope the key to at least one workflow (or *)')),
  /** The admin confirms that a workflow without runs is meant: one that has not run yet. */
  newWorkflows: z.boolean().default(false),
});

/** The named workflows (other than *) that have no run: usually a typo, which would leave the key useless. */
export async function workflowsWithoutRuns(db: Db, workflows: string[]): Promise<string[]> {
  const named = [...new Set(workflows.filter((w) => w !== '*'))];
  if (named.length === 0) return [];
  const known = await db.run.findMany({
    where: { workflow: { in: named } },
    distinct: ['workflow'],
    select: { workflow: true },
  });
  const found = new Set(known.map((r) => r.workflow));
  return named.filter((w) => !found.has(w));
}

/** Delegates to lib/runtime-keys (the API authenticates with the same token format and hash). */
export async function createRuntimeKey(ctx: Ctx, raw: unknown) {
  const { newWorkflows, ...input } = parseInput(createRuntimeKeyInput, raw);
  const unknown = newWorkflows ? [] : await workflowsWithoutRuns(ctx.db, input.workflows);
  if (unknown.length > 0) {
    const list = unknown.map((w) => `"${w}"`).join(', ');
    throw invalid(
      'workflows',
      `no workflow ${list} has ever run: check the spelling, or tick "New workflow" to scope the key to a workflow that has not run yet`,
      { unknownWorkflows: unknown },
    );
  }
  const created = await keys.createRuntimeKey(ctx, input);
  return { id: created.id, name: created.name, prefix: created.prefix, secret: created.token };
}

export const revokeRuntimeKeyInput = z.strictObject({
  keyId: z.uuid(),
  reason: reasonField,
});

export async function revokeRuntimeKey(ctx: Ctx, raw: unknown) {
  const input = parseInput(revokeRuntimeKeyInput, raw);
  await keys.revokeRuntimeKey(ctx, input.keyId, input.reason);
  return { id: input.keyId };
}

export const saveToolInput = z.strictObject({
  name: z
    .string()
    .trim()
    .regex(/^[a-z0-9_.-]{1,128}$/, 'lowercase letters, digits, _ . - only'),
  actions: csv(50).pipe(z.array(z.string()).min(1, 'at least one action tag')),
  targetType: z.enum(['email', 'phone', 'url']),
  provider: z.string().trim().min(1, 'a provider is required').max(128),
  generatedInputs: csv(100),
  supportsIdempotencyKey: z.boolean().default(false),
  supportsReceiptLookup: z.boolean().default(false),
  settleWindowSeconds: z.coerce.number().int().min(0).max(86_400).default(60),
  leaseSeconds: z.coerce.number().int().min(5).max(86_400).default(300),
  fourEyesBump: z.boolean().default(true),
  fourEyesReplay: z.boolean().default(true),
  distinctApprover: z.boolean().default(true),
});

export async function saveTool(ctx: Ctx, raw: unknown) {
  const input = parseInput(saveToolInput, raw);
  const result = await ctx.db.$transaction(async (tx) => {
    const before = await tx.toolDefinition.findUnique({ where: { name: input.name } });
    const tool = await tx.toolDefinition.upsert({ where: { name: input.name }, create: input, update: input });
    await appendAudit(tx, {
      chain: `tool:${tool.name}`,
      actor: ctx.actor,
      action: before ? 'tool.update' : 'tool.create',
      subjectType: 'tool',
      subjectId: tool.name,
      detail: { before: before ? { ...before, createdAt: undefined } : null, after: input },
      request: ctx.request,
    });
    return { id: tool.id, name: tool.name };
  });
  forgetTool(input.name);
  return result;
}
