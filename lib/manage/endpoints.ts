// The management API's operations (docs/MANAGE.md): what a person can decide or configure in the
// console, callable with a personal access token. Each decision is the console's own Decision
// (./decisions.ts); each read is the console's own view, filtered by the person's scope (Z1). The
// router (./http.ts) and the OpenAPI document (./openapi.ts) are both built from this one table.
import type { z } from 'zod';
import type { Decision } from '../auth/decision.ts';
import { assertVisible, type Guarded } from '../auth/guard.ts';
import { approvalsPage, submittedPlans } from '../read-models/admin.ts';
import { targetDetail } from '../read-models/target.ts';
import { auditPage } from '../read-models/views/audit-page.ts';
import { planPage } from '../read-models/views/plan-page.ts';
import type { SP } from '../read-models/views/query.ts';
import { replayPage } from '../read-models/views/replay-page.ts';
import { runPage } from '../read-models/views/run-page.ts';
import { runsPage } from '../read-models/views/runs-page.ts';
import { supportPage } from '../read-models/views/support-page.ts';
import { getReplayProgress } from '../replay/index.ts';
import { auditExportResponse } from '../audit/export-download.ts';
import type { Permission } from '../auth/permissions.ts';
import { seenEffect } from '../ledger/seen-version.ts';
import * as d from './decisions.ts';

type Params = Record<string, string>;

interface Base {
  /** The path under /api/v1, with {param} segments. */
  path: string;
  id: string;
  summary: string;
  description: string;
}
export interface DecisionEndpoint extends Base {
  method: 'POST';
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table of decisions of every input and result type
  decision: Decision<z.ZodType, any>;
}
export interface ReadEndpoint extends Base {
  method: 'GET';
  /** console.read unless named (the audit export needs audit.export). */
  permission?: Permission;
  /** The view as JSON, or a Response of its own (a streamed download). */
  read: (g: Guarded, params: Params, sp: SP, request: Request) => Promise<object | null>;
}
export type ManageEndpoint = DecisionEndpoint | ReadEndpoint;

const post = (path: string, id: string, summary: string, description: string, decision: DecisionEndpoint['decision']) =>
  ({ method: 'POST', path: `/manage${path}`, id, summary, description, decision }) as DecisionEndpoint;
const get = (path: string, id: string, summary: string, description: string, read: ReadEndpoint['read']) =>
  ({ method: 'GET', path: `/manage${path}`, id, summary, description, read }) as ReadEndpoint;

const Z8 =
  'Carries the version the decision was made on (Z8); without it 422 naming the field, and a changed version is refused as stale (409).';

export const MANAGE_ENDPOINTS: ManageEndpoint[] = [
  // Reads: the console's views, in the person's scope; something outside it answers 404.
  get(
    '/me',
    'manageMe',
    'Who the token acts as',
    'The person, their grants and the workflows they may see.',
    async (g) => ({
      id: g.user.id,
      email: g.user.email,
      name: g.user.name,
      grants: g.user.grants,
      scope: g.scope,
    }),
  ),
  get(
    '/runs',
    'manageListRuns',
    'List runs',
    "One page of runs with the console's filters (query: workflow, status, q, cursor, size).",
    (g, _p, sp) => runsPage(g, sp),
  ),
  get(
    '/runs/{runId}',
    'manageReadRun',
    'A run with its targets',
    "The run's header and one page of its plan joined with the ledger (P3).",
    (g, p, sp) => runPage(g, p.runId!, sp),
  ),
  get(
    '/runs/{runId}/plan',
    'manageReadPlan',
    "A run's latest plan",
    'The plan, its first targets, its status and items hash (the versions a decision names).',
    (g, p) => planPage(g, p.runId!),
  ),
  get(
    '/runs/{runId}/replay',
    'manageReadReplay',
    "A run's replays and preview",
    "The forced replay preview (with the set's hash), the run's replays and their progress.",
    (g, p, sp) => replayPage(g, p.runId!, sp),
  ),
  get(
    '/replays/{replayId}/progress',
    'manageReplayProgress',
    "A replay's progress",
    'Counts per item state, for watching a replay run.',
    async (g, p) => {
      await assertVisible(g, 'replay', p.replayId!);
      return getReplayProgress(g, { replayId: p.replayId! });
    },
  ),
  get(
    '/targets/{key}',
    'manageReadTarget',
    'One target by effect key',
    "Every epoch, attempt, transition and audit entry of the key, and `seen`: the key's current version, which a decision on it names.",
    async (g, p) => {
      const detail = await targetDetail(g.db, p.key!, g.scope);
      if (!detail) return null;
      const head = await g.db.effectKey.findUnique({ where: { key: p.key! } });
      return {
        ...detail,
        seen: seenEffect({ epoch: head?.currentEpoch, state: head?.state, changedAt: head?.changedAt }),
      };
    },
  ),
  get(
    '/queues/support',
    'manageSupportQueue',
    'The support queue',
    "One page of unknown effects with their versions (query as the console's support page).",
    (g, _p, sp) => supportPage(g, sp),
  ),
  get(
    '/queues/plans',
    'managePlanQueue',
    'Plans waiting for approval',
    "Submitted plans in the person's scope.",
    async (g) => ({ plans: await submittedPlans(g.db, g.scope) }),
  ),
  get(
    '/approvals',
    'manageListApprovals',
    'Four-eyes requests',
    'Bump and replay requests, newest first, with their status (the version a decision names).',
    async (g) => ({ approvals: await approvalsPage(g.db, g.scope) }),
  ),
  get(
    '/audit',
    'manageReadAudit',
    'The audit trail',
    "One page of entries with the console's filters and the chain verification; the read itself is recorded (audit.read).",
    (g, _p, sp) => auditPage(g, sp),
  ),

  {
    ...get(
      '/audit/export',
      'manageExportAudit',
      'Export the audit trail',
      "JSON Lines (a signed bundle once tree heads are signed) or CSV (format=csv), with the console's filters; in the person's scope. The export is itself recorded (audit.export).",
      (g, _p, _sp, request) => auditExportResponse(g, request),
    ),
    permission: 'audit.export',
  },

  // Decisions and settings: the console's own, with the same guard, version check and audit.
  post('/plans/approve', 'manageApprovePlan', 'Approve a plan', `P2: freezes the plan. ${Z8}`, d.approvePlanDecision),
  post('/plans/reject', 'manageRejectPlan', 'Reject a plan', `With a reason. ${Z8}`, d.rejectPlanDecision),
  post(
    '/effects/revoke',
    'manageRevokeEffects',
    'Revoke effects',
    `One or more keys with a reason; \`seen\` holds each key's version. ${Z8}`,
    d.revokeEffectsDecision,
  ),
  post(
    '/effects/resolve',
    'manageResolveUnknown',
    'Resolve one unknown',
    `Support's verdict (sent with evidence, or not sent). ${Z8}`,
    d.resolveUnknownDecision,
  ),
  post(
    '/effects/resolve-many',
    'manageResolveUnknowns',
    'Resolve several unknowns',
    `One verdict for several keys; \`seen\` holds each key's version. ${Z8}`,
    d.resolveManyDecision,
  ),
  post(
    '/bumps/request',
    'manageRequestBump',
    'Ask for an epoch bump',
    `Z3: a second operator decides. ${Z8}`,
    d.requestBumpDecision,
  ),
  post(
    '/bumps/decide',
    'manageDecideBump',
    'Approve or reject a bump request',
    `Z3: by an operator other than the requester. ${Z8}`,
    d.decideBumpDecision,
  ),
  post(
    '/replays/request',
    'manageRequestReplay',
    'Request a forced replay',
    `F1: names the set's hash from the preview. ${Z8}`,
    d.requestReplayDecision,
  ),
  post(
    '/replays/approve',
    'manageApproveReplay',
    'Approve a replay request',
    `Z3: by an operator other than the requester. ${Z8}`,
    d.approveReplayDecision,
  ),
  post('/replays/reject', 'manageRejectReplay', 'Reject a replay request', `Z3. ${Z8}`, d.rejectReplayDecision),
  post('/replays/start', 'manageStartReplay', 'Start an approved replay', Z8, d.startReplayDecision),
  post('/replays/pause', 'managePauseReplay', 'Pause a running replay', Z8, d.pauseReplayDecision),
  post('/replays/resume', 'manageResumeReplay', 'Resume a paused replay', Z8, d.resumeReplayDecision),
  post('/replays/cancel', 'manageCancelReplay', 'Cancel a replay', Z8, d.cancelReplayDecision),
  post(
    '/tools',
    'manageSaveTool',
    'Register or update a tool',
    'Admin, through an all-workflows grant (K1).',
    d.saveToolDecision,
  ),
  post(
    '/runtime-keys',
    'manageCreateRuntimeKey',
    'Create a runtime key',
    'Admin. The key is in the answer once; only its hash is kept (Z6).',
    d.createRuntimeKeyDecision,
  ),
  post(
    '/runtime-keys/revoke',
    'manageRevokeRuntimeKey',
    'Revoke a runtime key',
    'Admin, with a reason.',
    d.revokeRuntimeKeyDecision,
  ),
  post('/users', 'manageCreateUser', 'Add a person', 'Admin.', d.createUserDecision),
  post(
    '/users/update',
    'manageUpdateUser',
    "Change a person's role or disable them",
    'Admin. Disabling a person ends their sessions and their tokens at once.',
    d.updateUserDecision,
  ),
  post(
    '/grants',
    'manageAddGrant',
    'Grant a role',
    'Admin: a role on one workflow, or on every workflow.',
    d.addGrantDecision,
  ),
  post('/grants/remove', 'manageRemoveGrant', 'Take a role away', 'Admin, with a reason.', d.removeGrantDecision),
  post(
    '/apply',
    'manageApplySetup',
    'Apply a declarative setup',
    "Admin. Brings tools, runtime keys and each named workflow's grants to the document, in one transaction; `dryRun` lists the changes and writes nothing. Each change is audited with the file's SHA-256; new runtime keys' secrets are in the answer once.",
    d.applySetupDecision,
  ),
];

/** The endpoint for a method and path under /api/v1, with its path parameters; `allowed` lists the
 *  methods the path has when none matches the method. */
export function findEndpoint(
  method: string,
  path: string,
): { endpoint: ManageEndpoint; params: Params } | { endpoint: null; allowed: string[] } {
  const allowed: string[] = [];
  for (const endpoint of MANAGE_ENDPOINTS) {
    const names: string[] = [];
    const pattern = endpoint.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
      names.push(name);
      return '([^/]+)';
    });
    const m = new RegExp(`^${pattern}$`).exec(path);
    if (!m) continue;
    if (endpoint.method !== method) {
      allowed.push(endpoint.method);
      continue;
    }
    return { endpoint, params: Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)])) };
  }
  return { endpoint: null, allowed };
}
