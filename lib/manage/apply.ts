// `effect-ledger apply` on the server: the difference between a setup document and the ledger, and
// its application, in one transaction (docs/MANAGE.md). Each change runs the console's own command
// (saveTool, createRuntimeKey, revokeRuntimeKey, addGrant, removeGrant) or the stored routes' own
// (saveNotificationRoute, removeNotificationRoute), so its rules and its audit entry are that
// command's, and each also writes a config.apply entry carrying the file's SHA-256. A second apply
// of the same file finds nothing to change.
import { appendAudit } from '../audit/append.ts';
import { createRuntimeKey, revokeRuntimeKey, saveTool } from '../auth/admin-commands.ts';
import { addGrant, removeGrant } from '../auth/grant-commands.ts';
import type { Guarded } from '../auth/guard.ts';
import type { Db, DbOrTx } from '../db/client.ts';
import { invalid } from '../ledger/errors.ts';
import { removeNotificationRoute, saveNotificationRoute } from '../notifications/webhooks/stored-routes.ts';
import { planRouteChanges } from './apply-routes.ts';
import type { ApplyInput, Change } from './apply-document.ts';

const TOOL_FIELDS = [
  'actions',
  'targetType',
  'provider',
  'generatedInputs',
  'supportsIdempotencyKey',
  'supportsReceiptLookup',
  'settleWindowSeconds',
  'leaseSeconds',
  'fourEyesBump',
  'fourEyesReplay',
  'distinctApprover',
] as const;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const sorted = (xs: readonly string[]) => [...xs].sort();

/** What applying `doc` would change, read in `db` (inside the apply's transaction, or for a dry run),
 *  and what the changes leave wrong that is not the ledger's to fix (a route's secret not set). */
export async function planChanges(
  db: DbOrTx,
  doc: ApplyInput['document'],
): Promise<{ changes: Change[]; warnings: string[] }> {
  const changes: Change[] = [];
  const tools = await db.toolDefinition.findMany({ where: { name: { in: doc.tools.map((t) => t.name) } } });
  for (const tool of doc.tools) {
    const now = tools.find((t) => t.name === tool.name);
    if (!now) changes.push({ kind: 'tool', action: 'create', name: tool.name });
    else {
      const fields = TOOL_FIELDS.filter((f) => !same(now[f], tool[f]));
      if (fields.length) changes.push({ kind: 'tool', action: 'update', name: tool.name, fields });
    }
  }
  const keys = await db.runtimeKey.findMany({
    where: { name: { in: doc.runtimeKeys.map((k) => k.name) }, revokedAt: null },
  });
  for (const key of doc.runtimeKeys) {
    const now = keys.filter((k) => k.name === key.name);
    if (now.length === 0)
      changes.push({ kind: 'runtime_key', action: 'create', name: key.name, workflows: key.workflows });
    else if (now.some((k) => !same(sorted(k.workflows), sorted(key.workflows))))
      changes.push({ kind: 'runtime_key', action: 'replace', name: key.name, workflows: key.workflows });
  }
  const emails = [...new Set(Object.values(doc.workflows).flatMap((w) => w.grants.map((g) => g.user)))];
  const users = await db.user.findMany({ where: { email: { in: emails } }, select: { id: true, email: true } });
  for (const [workflow, { grants }] of Object.entries(doc.workflows)) {
    grants.forEach((g, i) => {
      if (!users.some((u) => u.email === g.user))
        throw invalid(`workflows.${workflow}.grants.${i}.user`, `no person with the email ${g.user}: add them first`);
    });
    const held = await db.roleGrant.findMany({
      where: { workflow: workflow === '*' ? null : workflow },
      select: { role: true, user: { select: { email: true } } },
    });
    const want = new Set(grants.map((g) => `${g.user} ${g.role}`));
    const have = new Set(held.map((g) => `${g.user.email} ${g.role}`));
    for (const g of grants)
      if (!have.has(`${g.user} ${g.role}`))
        changes.push({ kind: 'grant', action: 'add', workflow, user: g.user, role: g.role });
    for (const g of held)
      if (!want.has(`${g.user.email} ${g.role}`))
        changes.push({ kind: 'grant', action: 'remove', workflow, user: g.user.email, role: g.role });
  }
  const routes = await planRouteChanges(db, doc.notificationRoutes);
  return { changes: [...changes, ...routes.changes], warnings: routes.warnings };
}

/** The transaction's client, handed to commands that open a transaction of their own: theirs runs
 *  inside this one, so the whole file applies or none of it does. */
function within(tx: DbOrTx): Db {
  const proxy: Db = new Proxy(tx as Db, {
    get: (target, prop) =>
      prop === '$transaction' ? (fn: (t: DbOrTx) => unknown) => fn(proxy) : Reflect.get(target, prop, target),
  });
  return proxy;
}

export async function applySetup(g: Guarded, input: ApplyInput) {
  if (input.dryRun)
    return { dryRun: true, sha256: input.sha256, ...(await planChanges(g.db, input.document)), secrets: [] };
  return g.db.$transaction(
    async (tx) => {
      // One apply at a time: two runs of a pipeline must not both see a key missing and both create it.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('effect-ledger apply'))`;
      const { changes, warnings } = await planChanges(tx, input.document);
      const ctx = { db: within(tx), actor: g.actor, request: g.request };
      const reason = `setup file sha256:${input.sha256}`;
      const secrets: { name: string; id: string; token: string }[] = [];
      for (const change of changes) {
        let subject: { type: 'tool' | 'runtime_key' | 'user' | 'notification_route'; id: string };
        if (change.kind === 'tool') {
          const tool = input.document.tools.find((t) => t.name === change.name)!;
          await saveTool(ctx, tool);
          subject = { type: 'tool', id: change.name };
        } else if (change.kind === 'runtime_key') {
          if (change.action === 'replace')
            for (const old of await tx.runtimeKey.findMany({ where: { name: change.name, revokedAt: null } }))
              await revokeRuntimeKey(ctx, { keyId: old.id, reason: `${reason}: workflows changed` });
          const made = await createRuntimeKey(ctx, {
            name: change.name,
            workflows: change.workflows,
            newWorkflows: true,
          });
          secrets.push({ name: made.name, id: made.id, token: made.secret });
          subject = { type: 'runtime_key', id: made.id };
        } else if (change.kind === 'notification_route') {
          if (change.action === 'remove') await removeNotificationRoute(ctx, change.name, reason);
          else {
            const route = input.document.notificationRoutes!.find((r) => r.name === change.name)!;
            await saveNotificationRoute(ctx, route, reason);
          }
          subject = { type: 'notification_route', id: change.name };
        } else {
          const user = await tx.user.findUniqueOrThrow({ where: { email: change.user }, select: { id: true } });
          const workflow = change.workflow === '*' ? null : change.workflow;
          if (change.action === 'add')
            await addGrant(ctx, { userId: user.id, role: change.role, workflow, newWorkflow: true, reason });
          else {
            const grant = await tx.roleGrant.findFirstOrThrow({
              where: { userId: user.id, role: change.role as never, workflow },
            });
            await removeGrant(ctx, { grantId: grant.id, reason });
          }
          subject = { type: 'user', id: user.id };
        }
        await appendAudit(tx, {
          chain: `${subject.type}:${subject.id}`,
          actor: g.actor,
          action: 'config.apply',
          subjectType: subject.type,
          subjectId: subject.id,
          detail: { sha256: input.sha256, change },
          request: g.request,
        });
      }
      return { dryRun: false, sha256: input.sha256, changes, warnings, secrets };
    },
    { timeout: 120_000, maxWait: 30_000 },
  );
}
