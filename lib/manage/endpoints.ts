// The management API's operations (docs/MANAGE.md): what a person can decide or configure in the
// console, callable with a personal access token. Each decision is the console's own Decision
// (./decisions.ts, ./admin-decisions.ts); each read is the console's own view (./read-endpoints.ts),
// filtered by the person's scope (Z1). The router (./http.ts) and the OpenAPI document
// (./openapi.ts) are both built from this one table.
import * as a from './admin-decisions.ts';
import * as d from './decisions.ts';
import type { DecisionEndpoint, ManageEndpoint } from './endpoint-types.ts';
import { READ_ENDPOINTS } from './read-endpoints.ts';

export type { DecisionEndpoint, ManageEndpoint, ReadEndpoint } from './endpoint-types.ts';

type Params = Record<string, string>;

const post = (path: string, id: string, summary: string, description: string, decision: DecisionEndpoint['decision']) =>
  ({ method: 'POST', path: `/manage${path}`, id, summary, description, decision }) as DecisionEndpoint;

const Z8 =
  'Carries the version the decision was made on (Z8); without it 422 naming the field, and a changed version is refused as stale (409).';

export const MANAGE_ENDPOINTS: ManageEndpoint[] = [
  ...READ_ENDPOINTS,

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
    a.saveToolDecision,
  ),
  post(
    '/runtime-keys',
    'manageCreateRuntimeKey',
    'Create a runtime key',
    'Admin. The key is in the answer once; only its hash is kept (Z6).',
    a.createRuntimeKeyDecision,
  ),
  post(
    '/runtime-keys/revoke',
    'manageRevokeRuntimeKey',
    'Revoke a runtime key',
    'Admin, with a reason.',
    a.revokeRuntimeKeyDecision,
  ),
  post('/users', 'manageCreateUser', 'Add a person', 'Admin.', a.createUserDecision),
  post(
    '/users/update',
    'manageUpdateUser',
    "Change a person's role or disable them",
    'Admin. Disabling a person ends their sessions and their tokens at once.',
    a.updateUserDecision,
  ),
  post(
    '/grants',
    'manageAddGrant',
    'Grant a role',
    'Admin: a role on one workflow, or on every workflow.',
    a.addGrantDecision,
  ),
  post('/grants/remove', 'manageRemoveGrant', 'Take a role away', 'Admin, with a reason.', a.removeGrantDecision),
  post(
    '/apply',
    'manageApplySetup',
    'Apply a declarative setup',
    "Admin. Brings tools, runtime keys, each named workflow's grants and (when the document lists them) the stored notification routes to the document, in one transaction; `dryRun` lists the changes and writes nothing. Each change is audited with the file's SHA-256; new runtime keys' secrets are in the answer once; `warnings` names routes whose secret variable is not set in the server's environment.",
    a.applySetupDecision,
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
