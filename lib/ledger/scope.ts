// Workflow scope (Z6): a runtime key names the workflows it may touch, and a runtime may act only on
// runs and effects of those workflows. The HTTP operations check it at the door and the commands check
// it again where an id comes from the caller; both ask here, so the rule and its message live once.
import { auditRefusal } from '@/lib/audit/append.ts';
import type { AuditAction, AuditSubjectOf } from '@/lib/audit/actions.ts';
import type { DbOrTx } from '@/lib/db/client.ts';
import type { Actor, RequestMeta } from '../core/actor.ts';
import { forbidden } from './errors.ts';
import { getRun } from './catalog.ts';

/** Whether the actor may act on runs of this workflow. People and the product's own machinery may. */
export function inWorkflowScope(actor: Actor, workflow: string): boolean {
  if (actor.kind !== 'runtime') return true;
  return actor.workflows.includes('*') || actor.workflows.includes(workflow);
}

export function outOfScopeMessage(actor: Actor, workflow: string): string {
  return `runtime key "${actor.label}" is not scoped to workflow "${workflow}"`;
}

export interface ScopeRefusal<A extends AuditAction> {
  action: A;
  /** The chain the refusal lands on (its "refused:" twin); defaults to `<subjectType>:<subjectId>`. */
  chain?: string;
  subjectType: AuditSubjectOf<A>;
  subjectId: string;
  runId?: string | null;
  after?: string | null;
  reason?: string | null;
  detail?: Record<string, unknown>;
}

/** Throws `forbidden` (naming the workflow) after auditing the refusal (A4) when out of scope. */
export async function requireWorkflowScope<A extends AuditAction>(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta },
  workflow: string,
  refusal: ScopeRefusal<A>,
): Promise<void> {
  if (inWorkflowScope(ctx.actor, workflow)) return;
  const why = outOfScopeMessage(ctx.actor, workflow);
  await auditRefusal(ctx.db, {
    ...refusal,
    chain: refusal.chain ?? `${refusal.subjectType}:${refusal.subjectId}`,
    actor: ctx.actor,
    why,
    request: ctx.request,
  });
  throw forbidden(why, { workflow });
}

// The workflow a key belongs to never changes (the key derives from its trigger, and a trigger
// belongs to one workflow), so it is remembered: an outcome right after its claim, in the same
// process, asks the database nothing for its scope check. Bounded; cleared when full.
const workflows = new Map<string, string>();
const WORKFLOWS_MAX = 100_000;

/** Called by the claim, which knows the key's workflow. */
export function rememberEffectWorkflow(key: string, workflow: string): void {
  if (workflows.size >= WORKFLOWS_MAX) workflows.clear();
  workflows.set(key, workflow);
}

/**
 * The workflow check for an effect named by its key: a runtime may touch only effects whose trigger
 * belongs to one of its workflows. Keys that do not exist pass here; the command reports them.
 */
export async function requireEffectScope<A extends AuditAction>(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta },
  key: string,
  refusal: Omit<ScopeRefusal<A>, 'subjectId' | 'runId'>,
): Promise<void> {
  const { actor } = ctx;
  if (actor.kind !== 'runtime' || actor.workflows.includes('*')) return;
  const owner = async () =>
    (
      await ctx.db.$queryRaw<{ workflow: string; run_id: string }[]>`
        SELECT ev.workflow, k.run_id FROM effect_key k JOIN event ev ON ev.trigger_id = k.trigger_id WHERE k.key = ${key}`
    )[0];
  let workflow = workflows.get(key);
  if (workflow === undefined) {
    const row = await owner();
    if (!row) return;
    workflow = row.workflow;
    rememberEffectWorkflow(key, workflow);
  }
  if (inWorkflowScope(actor, workflow)) return;
  const runId = (await owner())?.run_id ?? null;
  await requireWorkflowScope(ctx, workflow, { ...refusal, subjectId: key, runId });
}

/** Z6 for a read or a check of one run by id: refuses (audited, A4) a runtime key not scoped to the
 *  run's workflow. A missing run is not_found. */
export async function requireRunScope(
  ctx: { db: DbOrTx; actor: Actor; request?: RequestMeta },
  runId: string,
  action: 'run.read' | 'run.replay_request',
): Promise<void> {
  const info = await getRun(ctx.db, runId);
  await requireWorkflowScope(ctx, info.workflow, { action, subjectType: 'run', subjectId: info.id, runId: info.id });
}
