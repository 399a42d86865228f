// Roles per workflow (Z1). A person holds grants: a role on one workflow, or on every workflow
// (workflow null). What they may do on a workflow is what any of the roles they hold there allows;
// what they may see is the runs of the workflows they hold any role in. Admin-only things (users,
// runtime keys, tools) concern no workflow, so only an all-workflows grant opens them.
import { Prisma } from '../db/client.ts';
import type { Role } from '../db/generated/enums.ts';
import { can, roleLabel, ROLES, type Permission } from '../core/permissions.ts';

export interface Grant {
  role: Role;
  /** null: every workflow, including ones that do not exist yet. */
  workflow: string | null;
}

/** Permissions that concern no workflow: held only through an all-workflows grant. */
export const ALL_WORKFLOWS_ONLY: readonly Permission[] = ['users.manage', 'runtime_keys.manage', 'tools.manage'];

/** The workflows a person may see: every one, or exactly these. */
export type WorkflowScope = { all: true } | { all: false; workflows: readonly string[] };

/** For callers that act for no person (the worker, scripts, the agent API's own scoping). */
export const EVERY_WORKFLOW: WorkflowScope = { all: true };

export function scopeOf(grants: readonly Grant[]): WorkflowScope {
  if (grants.some((g) => g.workflow === null)) return EVERY_WORKFLOW;
  return { all: false, workflows: [...new Set(grants.map((g) => g.workflow as string))].sort() };
}

export function inScope(scope: WorkflowScope, workflow: string): boolean {
  return scope.all || scope.workflows.includes(workflow);
}

/**
 * The role through which the grants allow `permission` on `workflow`, or null. With workflow null
 * (something that belongs to no workflow) only all-workflows grants count. When several roles allow
 * it, the first in the order of ROLES is named, so the audit entry's role is stable.
 */
export function roleFor(grants: readonly Grant[], permission: Permission, workflow: string | null): Role | null {
  const held = new Set(grants.filter((g) => g.workflow === null || g.workflow === workflow).map((g) => g.role));
  return ROLES.find((role) => held.has(role) && can(role, permission)) ?? null;
}

export function canOn(grants: readonly Grant[], permission: Permission, workflow: string | null): boolean {
  return roleFor(grants, permission, workflow) !== null;
}

/** Whether the grants allow `permission` on every one of a row's workflows (a request over keys of
 *  several runs may span several): what the guard checks before the action, so a page shows the
 *  action exactly when the server would take it. A row of no known workflow allows nothing. */
export function canOnEach(grants: readonly Grant[], permission: Permission, workflows: readonly string[]): boolean {
  return workflows.length > 0 && workflows.every((w) => canOn(grants, permission, w));
}

/** The role allowing `permission` on at least one workflow (a list the person reads is then filtered
 *  to their scope), or, for an admin-only permission, on all of them. */
export function roleSomewhere(grants: readonly Grant[], permission: Permission): Role | null {
  if (ALL_WORKFLOWS_ONLY.includes(permission)) return roleFor(grants, permission, null);
  const held = new Set(grants.map((g) => g.role));
  return ROLES.find((role) => held.has(role) && can(role, permission)) ?? null;
}

export function canSomewhere(grants: readonly Grant[], permission: Permission): boolean {
  return roleSomewhere(grants, permission) !== null;
}

/** "Operator on welcome-campaign, Support on all workflows" */
export function grantsLabel(grants: readonly Grant[]): string {
  if (grants.length === 0) return 'no role';
  return grants.map((g) => `${roleLabel(g.role)} on ${g.workflow ?? 'all workflows'}`).join(', ');
}

/** Short form for the navigation: the role alone for one all-workflows grant, else each grant. */
export function grantsSummary(grants: readonly Grant[]): string {
  if (grants.length === 1 && grants[0]!.workflow === null) return grants[0]!.role;
  if (grants.length === 0) return 'no role';
  return grants.map((g) => `${g.role} on ${g.workflow ?? 'all workflows'}`).join(', ');
}

/** A SQL condition on a workflow column: true for every row in scope. */
export function workflowInScopeSql(scope: WorkflowScope, column: Prisma.Sql): Prisma.Sql {
  if (scope.all) return Prisma.sql`TRUE`;
  if (scope.workflows.length === 0) return Prisma.sql`FALSE`;
  return Prisma.sql`${column} = ANY(${[...scope.workflows]}::text[])`;
}

/** A SQL condition on a run id column: true for runs of workflows in scope. A row with no run (users,
 *  keys, tools) belongs to no workflow and is seen only with an all-workflows grant. */
export function runInScopeSql(scope: WorkflowScope, runIdColumn: Prisma.Sql): Prisma.Sql {
  if (scope.all) return Prisma.sql`TRUE`;
  return Prisma.sql`EXISTS (SELECT 1 FROM run scope_run WHERE scope_run.id = ${runIdColumn} AND ${workflowInScopeSql(scope, Prisma.sql`scope_run.workflow`)})`;
}

/** The same condition as a Prisma where on a model with a `workflow` field. */
export function workflowWhere(scope: WorkflowScope): { workflow?: { in: string[] } } {
  return scope.all ? {} : { workflow: { in: [...scope.workflows] } };
}
