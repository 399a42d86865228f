// Runtime keys are scoped to workflows (Z6); a runtime may touch only runs of those workflows.
import type { Actor } from './actor.ts';
import { forbidden } from './errors.ts';

export function assertWorkflowInScope(actor: Actor, workflow: string): void {
  if (actor.kind !== 'runtime') return;
  if (actor.workflows.includes('*') || actor.workflows.includes(workflow)) return;
  throw forbidden(`runtime key "${actor.label}" is not scoped to workflow "${workflow}"`, { workflow });
}
