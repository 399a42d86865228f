// Decision insights: four-eyes bump and replay requests and plan approvals made through the real
// commands, counted per workflow, kind and period; the approval rate is approved over decided and the
// times to decide are the median and p90 over approved and rejected requests. A person with a role on
// one workflow sees only it (Z1); a bad parameter is refused naming its field; the export's CSV rows
// are the same figures.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, makeTool, suffix } from '../helpers/factories.ts';
import { makeCampaign } from './replay-fixtures.ts';
import { decideBump } from '@/lib/approvals/decide-bump.ts';
import { requestBump } from '@/lib/approvals/request-bump.ts';
import { addGrant, removeGrant } from '@/lib/auth/grant-commands.ts';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';
import { mintSessionToken } from '@/lib/auth/session.ts';
import { insertUser } from '@/lib/auth/users.ts';
import { LedgerError } from '@/lib/core/errors.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { approvePlan, rejectPlan, submitPlan, type Actor } from '@/lib/ledger/index.ts';
import { decisionInsights, insightsQueryFrom, type InsightRow } from '@/lib/read-models/decision-insights.ts';
import { approveReplay, rejectReplay, requestReplay } from '@/lib/replay/index.ts';

let t: TestDatabase;
/** When the bump requests were asked (the first day a Monday, of ISO week 45). */
const BUMPS_ASKED = [
  '2026-11-02T10:00:00Z',
  '2026-11-02T11:00:00Z',
  '2026-11-04T10:00:00Z',
  '2026-11-10T10:00:00Z',
  '2026-11-10T12:00:00Z',
];
const system: Actor = { kind: 'system', id: 'test', label: 'test setup' };
const wf = { bumps: `bumps_${suffix()}`, replays: `replays_${suffix()}` };
let alice: Actor & { kind: 'user' };
let bob: Actor & { kind: 'user' };
let scopedCookie: string;

async function person(role: 'operator' | 'auditor') {
  const email = `${role}-${randomUUID()}@example.com`;
  const u = await insertUser(t.db, { email, name: role, role, password: 'a-long-enough-password' }, system);
  return { actor: { kind: 'user' as const, id: u.id, label: email, role }, user: u };
}

/** A bump request on one done effect of the bumps workflow, asked at `at`. */
async function bump(at: string, decide?: { decision: 'approve' | 'reject'; afterSeconds: number }) {
  const run = await makeRun(t.db, wf.bumps);
  const e = await makeEffect(t.db, 'done', { runId: run.runId });
  const r = await requestBump({ db: t.db, actor: alice }, { keys: [e.key], reason: 'resend after template fix' });
  if (r.mode !== 'requested') throw new Error('expected a four-eyes request');
  if (decide)
    await decideBump(
      { db: t.db, actor: bob },
      { requestId: r.requestId, setHash: r.setHash, decision: decide.decision, reason: 'checked' },
    );
  // The request and its decision are moved to a known time, so periods and durations are exact.
  await t.owner(
    `UPDATE approval_request SET requested_at = $2::timestamptz,
            decided_at = CASE WHEN decided_at IS NULL THEN NULL ELSE $2::timestamptz + make_interval(secs => $3) END
      WHERE id = $1`,
    [r.requestId, at, decide?.afterSeconds ?? 0],
  );
  return r;
}

/** A replay request on a campaign whose run belongs to the replays workflow. */
async function replay() {
  const c = await makeCampaign(t.db, { failed: 1 });
  await t.owner(`UPDATE run SET workflow = $2 WHERE id = $1`, [c.runId, wf.replays]);
  return requestReplay({ db: t.db, actor: alice }, { runId: c.runId, confirmCount: 1, reason: 'crashed run' });
}

async function plan() {
  const tool = await makeTool(t.db);
  const run = await makeRun(t.db, wf.bumps);
  return submitPlan(
    { db: t.db, actor: { kind: 'runtime', id: 'rt', label: 'run-42', workflows: ['*'] } },
    { runId: run.runId, items: [{ tool: tool.name, action: 'receipt', recordId: 'r1', target: `p-${suffix()}@x.io` }] },
  );
}

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 6 });
  process.env.DATABASE_URL = t.appUrl;
  process.env.NEXTAUTH_SECRET = 'decision-insights-secret';
  resetEnvCache();
  [alice, bob] = [(await person('operator')).actor, (await person('operator')).actor];
  await bump(BUMPS_ASKED[0]!, { decision: 'approve', afterSeconds: 60 });
  const stale = await bump(BUMPS_ASKED[1]!);
  await t.owner(`UPDATE approval_request SET expires_at = now() - interval '1 second' WHERE id = $1`, [
    stale.requestId,
  ]);
  await bump(BUMPS_ASKED[2]!, { decision: 'approve', afterSeconds: 180 });
  await bump(BUMPS_ASKED[3]!, { decision: 'reject', afterSeconds: 600 });
  await bump(BUMPS_ASKED[4]!);

  const approved = await replay();
  await approveReplay(
    { db: t.db, actor: bob },
    { approvalRequestId: approved.approvalRequestId!, setHash: approved.setHash },
  );
  const rejected = await replay();
  await rejectReplay({ db: t.db, actor: bob }, { approvalRequestId: rejected.approvalRequestId!, reason: 'no' });
  const expired = await replay();
  await t.owner(`UPDATE approval_request SET expires_at = now() - interval '1 second' WHERE id = $1`, [
    expired.approvalRequestId,
  ]);
  // The approval command is what marks an expired replay request expired (Z3).
  expect(
    await approveReplay(
      { db: t.db, actor: bob },
      { approvalRequestId: expired.approvalRequestId!, setHash: expired.setHash },
    ),
  ).toMatchObject({ status: 'expired' });

  const p1 = await plan();
  await approvePlan({ db: t.db, actor: bob }, { planId: p1.planId, itemsHash: p1.itemsHash });
  const p2 = await plan();
  await rejectPlan({ db: t.db, actor: bob }, { planId: p2.planId, itemsHash: p2.itemsHash, reason: 'wrong list' });
  await plan();

  const scoped = await person('auditor');
  const all = await t.db.roleGrant.findFirstOrThrow({ where: { userId: scoped.user.id, workflow: null } });
  await addGrant(
    { db: t.db, actor: system },
    { userId: scoped.user.id, role: 'auditor', workflow: wf.replays, reason: 'team' },
  );
  await removeGrant({ db: t.db, actor: system }, { grantId: all.id, reason: 'their workflow only' });
  const u = scoped.user;
  scopedCookie = `next-auth.session-token=${await mintSessionToken({ id: u.id, email: u.email, sessionVersion: u.sessionVersion })}`;
});

const NOVEMBER = { from: '2026-11-01', to: '2026-11-30' };
const rowOf = (rows: InsightRow[], workflow: string, kind: string, period: string | null) =>
  rows.find((r) => r.workflow === workflow && r.kind === kind && r.period === period);

async function download(query: string, cookie?: string) {
  const { GET } = await import('@/app/api/console/insights/route.ts');
  const headers = new Headers({ host: 'console.test', ...(cookie ? { cookie } : {}) });
  const res = await GET(new Request(`http://console.test/api/console/insights${query}`, { headers }), undefined);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

describe('decision insights', () => {
  it('counts bump requests per workflow over the range: approved, rejected, expired, open, rate, median and p90', async () => {
    const { rows } = await decisionInsights(t.db, EVERY_WORKFLOW, insightsQueryFrom({ ...NOVEMBER }));
    expect(rowOf(rows, wf.bumps, 'bump', null)).toEqual({
      workflow: wf.bumps,
      kind: 'bump',
      period: null,
      requested: 5,
      approved: 2,
      rejected: 1,
      expired: 1,
      cancelled: 0,
      open: 1,
      approvalRate: 2 / 3,
      medianSeconds: 180,
      // percentile_cont interpolates: 180 + 0.8 * (600 - 180).
      p90Seconds: 516,
    });
  });

  it('splits by day and by ISO week of the request', async () => {
    const days = (await decisionInsights(t.db, EVERY_WORKFLOW, insightsQueryFrom({ ...NOVEMBER }))).rows;
    const byDay = days.filter((r) => r.workflow === wf.bumps && r.kind === 'bump' && r.period !== null);
    expect(byDay.map((r) => [r.period, r.requested, r.approved, r.expired, r.medianSeconds])).toEqual([
      ['2026-11-02', 2, 1, 1, 60],
      ['2026-11-04', 1, 1, 0, 180],
      ['2026-11-10', 2, 0, 0, 600],
    ]);
    const weeks = (await decisionInsights(t.db, EVERY_WORKFLOW, insightsQueryFrom({ ...NOVEMBER, period: 'week' })))
      .rows;
    const byWeek = weeks.filter((r) => r.workflow === wf.bumps && r.kind === 'bump' && r.period !== null);
    expect(byWeek.map((r) => [r.period, r.requested, r.medianSeconds, r.approvalRate])).toEqual([
      ['2026-W45', 3, 120, 1],
      ['2026-W46', 2, 600, 0],
    ]);
    // A range that ends before the second week leaves it out.
    const first = await decisionInsights(
      t.db,
      EVERY_WORKFLOW,
      insightsQueryFrom({ from: '2026-11-01', to: '2026-11-09' }),
    );
    expect(rowOf(first.rows, wf.bumps, 'bump', null)).toMatchObject({ requested: 3, approved: 2, expired: 1, open: 0 });
  });

  it('counts replay requests and plan approvals made today in the default range of the last 30 days', async () => {
    const { rows, query } = await decisionInsights(t.db, EVERY_WORKFLOW, insightsQueryFrom({}));
    expect(query.period).toBe('day');
    expect(rowOf(rows, wf.replays, 'replay', null)).toMatchObject({
      requested: 3,
      approved: 1,
      rejected: 1,
      expired: 1,
      open: 0,
      approvalRate: 0.5,
    });
    const plans = rowOf(rows, wf.bumps, 'plan', null);
    expect(plans).toMatchObject({ requested: 3, approved: 1, rejected: 1, open: 1, approvalRate: 0.5 });
    expect(plans!.medianSeconds).toBeGreaterThanOrEqual(0);
    // The default range is the 30 days up to today: the bumps asked before it are left out.
    const since = Date.now() - 30 * 86_400_000;
    const inRange = BUMPS_ASKED.filter((at) => new Date(at).getTime() >= since).length;
    expect(rowOf(rows, wf.bumps, 'bump', null)?.requested).toBe(inRange || undefined);
    expect(inRange).toBeLessThan(BUMPS_ASKED.length);
  });

  it('Z1: a person with a role on one workflow sees only that workflow', async () => {
    const scope = { all: false as const, workflows: [wf.replays] };
    const { rows } = await decisionInsights(t.db, scope, insightsQueryFrom({ from: '2026-11-01', to: '2026-12-31' }));
    expect(new Set(rows.map((r) => r.workflow))).toEqual(new Set([wf.replays]));
    const json = await download('?format=json&from=2026-11-01&to=2026-12-31', scopedCookie);
    expect(json.status).toBe(200);
    const body = JSON.parse(json.text) as { rows: InsightRow[] };
    expect(body.rows.length).toBeGreaterThan(0);
    expect(body.rows.every((r) => r.workflow === wf.replays)).toBe(true);
  });

  it('refuses a bad parameter naming its field, in the read model and as a 422 from the export', () => {
    const fieldOf = (sp: Record<string, string>) => {
      try {
        insightsQueryFrom(sp);
        return null;
      } catch (error) {
        return error instanceof LedgerError ? error.details.field : 'not a LedgerError';
      }
    };
    expect(fieldOf({ period: 'month' })).toBe('period');
    expect(fieldOf({ from: '2026-02-30' })).toBe('from');
    expect(fieldOf({ to: 'yesterday' })).toBe('to');
    expect(fieldOf({ from: '2026-11-10', to: '2026-11-01' })).toBe('to');
    expect(fieldOf({ from: '2024-01-01', to: '2026-11-01' })).toBe('from');
  });

  it('the export answers 422 naming the field, and 401 to no one signed in', async () => {
    for (const [query, field] of [
      ['?period=year', 'period'],
      ['?from=2026-13-01', 'from'],
      ['?format=xml', 'format'],
    ] as const) {
      const res = await download(query, scopedCookie);
      expect(res.status).toBe(422);
      expect(JSON.parse(res.text)).toMatchObject({ code: 'validation', field });
    }
    expect((await download('')).status).toBe(401);
  });

  it('exports CSV by default: a header, then one line per workflow, kind and period', async () => {
    const res = await download('?from=2026-11-01&to=2026-12-31&period=week', scopedCookie);
    expect(res.status).toBe(200);
    expect(res.type).toContain('text/csv');
    const lines = res.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'workflow,kind,period,requested,approved,rejected,expired,cancelled,open,approvalRate,medianSeconds,p90Seconds',
    );
    // A workflow's total for the range has an empty period.
    const total = lines.find((l) => l.startsWith(`"${wf.replays}","replay",,`));
    expect(total).toMatch(new RegExp(`^"${wf.replays}","replay",,"3","1","1","1","0","0","0.5","[0-9.]+","[0-9.]+"$`));
    expect(lines.slice(1).every((l) => l.startsWith(`"${wf.replays}"`))).toBe(true);
    expect(lines.some((l) => /^"[^"]+","replay","\d{4}-W\d{2}"/.test(l))).toBe(true);
  });
});
