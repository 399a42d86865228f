// The management API's reads (docs/MANAGE.md): the console's own views, in the token's person's
// scope (Z1); something outside it answers 404, as in the console. ./endpoints.ts lists them with
// the decisions.
import { auditExportResponse } from '../audit/export-download.ts';
import { assertVisible } from '../auth/guard.ts';
import { seenEffect } from '../ledger/seen-version.ts';
import { approvalsPage, submittedPlans } from '../read-models/admin.ts';
import { targetDetail } from '../read-models/target.ts';
import { readAuditPage, recordAuditPageRead } from '../read-models/views/audit-page.ts';
import { planPage } from '../read-models/views/plan-page.ts';
import { replayPage } from '../read-models/views/replay-page.ts';
import { runPage } from '../read-models/views/run-page.ts';
import { runsPage } from '../read-models/views/runs-page.ts';
import { supportPage } from '../read-models/views/support-page.ts';
import { describeRoutes } from '../notifications/webhooks/stored-routes.ts';
import { getReplayProgress } from '../replay/index.ts';
import type { ReadEndpoint } from './endpoint-types.ts';

const get = (path: string, id: string, summary: string, description: string, read: ReadEndpoint['read']) =>
  ({ method: 'GET', path: `/manage${path}`, id, summary, description, read }) as ReadEndpoint;

export const READ_ENDPOINTS: ReadEndpoint[] = [
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
    async (g, _p, sp) => {
      // The read model writes nothing: the endpoint records the read, as the console's view route does.
      const page = await readAuditPage(g, sp);
      await recordAuditPageRead(g, page, sp);
      return page;
    },
  ),

  {
    // Admin only: a chat webhook URL (a Slack one in particular) is itself a credential.
    ...get(
      '/notification-routes',
      'manageListNotificationRoutes',
      'Chat webhook routes',
      'Admin. The routes of NOTIFY_WEBHOOK_ROUTES and those kept by apply, each with its `source` (environment or stored), whether it is in use (a stored route whose name the environment has since taken is not) and `secretProblem`: why this server cannot sign its posts (its secret variable unset or malformed), or null. Never the secret.',
      async (g) => ({ routes: await describeRoutes(g.db) }),
    ),
    permission: 'users.manage',
  },
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
];
