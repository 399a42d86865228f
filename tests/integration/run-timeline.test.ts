// A run's timeline (lib/read-models/run-timeline.ts): the run's claims, provider calls and answers,
// state changes, decisions and replays in one time order, with who by name and durations; keyset
// pages that neither skip nor repeat an event, among events of one microsecond too; filters by kind and
// target; a person without a role on the run's workflow gets a 404 (Z1); a malformed cursor, kind or
// order is a 422 naming it.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { recordResponse } from '@/lib/ledger/commands/record-response.ts';
import { claimEffect } from '@/lib/ledger/commands/claim-effect.ts';
import { runTimeline, type TimelineEvent } from '@/lib/read-models/run-timeline.ts';
import { timelineQuery, type TimelineQuery } from '@/lib/read-models/run-timeline-query.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, makeTool, runtimeActor, suffix, type TestEffect } from '../helpers/factories.ts';

let t: TestDatabase;
const system = { kind: 'system' as const, id: 'test', label: 'test setup' };
const wf = { mine: `tl_mine_${suffix()}`, other: `tl_other_${suffix()}` };
const cookies = {} as Record<'scoped' | 'everywhere', string>;
let runId: string;
let done: TestEffect;
let revoked: TestEffect;
let awaiting: TestEffect;
const tied: string[] = [];
let operatorEmail: string;
const provider = `mailer-${suffix()}`;
const runtime = runtimeActor();

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 6 });
  process.env.DATABASE_URL = t.appUrl;
  process.env.NEXTAUTH_SECRET = 'run-timeline-test-secret';
  resetEnvCache();
  const tool = (await makeTool(t.db, { provider })).name;
  runId = (await makeRun(t.db, wf.mine)).runId;
  await makeRun(t.db, wf.other);
  done = await makeEffect(t.db, 'done', { tool, runId, runtime, target: `Done-${suffix()}@example.com`.toLowerCase() });
  revoked = await makeEffect(t.db, 'revoked', { tool, runId, runtime });
  awaiting = await makeEffect(t.db, 'awaiting', { tool, runId, runtime });
  await makeEffect(t.db, 'failed', { tool, runId, runtime });
  // A provider answer for the done effect's call.
  const attempt = await t.db.attempt.findFirstOrThrow({ where: { key: done.key } });
  await recordResponse(
    { db: t.db, actor: runtime },
    { attemptId: attempt.id, status: 250, headers: [], body: new Uint8Array([111, 107]) },
  );
  // Four calls inside one microsecond: the pages must still show each once.
  for (let i = 0; i < 4; i++) {
    const claim = await claimEffect(
      { db: t.db, actor: runtime },
      { runId, tool, action: 'receipt', recordId: `tie-${i}`, target: `tie-${i}-${suffix()}@example.com` },
    );
    if (!claim.claimed) throw new Error('a fresh key was not claimable');
    tied.push(claim.attemptId);
  }
  await t.owner(`UPDATE attempt SET started_at = '2026-01-02 03:04:05.123456+00' WHERE id = ANY($1::uuid[])`, [tied]);

  const { insertUser } = await import('@/lib/auth/users.ts');
  const { addGrant, removeGrant } = await import('@/lib/auth/grant-commands.ts');
  const { mintSessionToken } = await import('@/lib/auth/session.ts');
  for (const who of ['scoped', 'everywhere'] as const) {
    const u = await insertUser(
      t.db,
      { email: `${who}-${randomUUID()}@example.com`, name: who, role: 'operator', password: 'a-long-enough-password' },
      system,
    );
    if (who === 'scoped') {
      const all = await t.db.roleGrant.findFirstOrThrow({ where: { userId: u.id, workflow: null } });
      await addGrant(
        { db: t.db, actor: system },
        { userId: u.id, role: 'operator', workflow: wf.other, reason: 'team' },
      );
      await removeGrant({ db: t.db, actor: system }, { grantId: all.id, reason: 'their workflow only' });
    } else operatorEmail = u.email;
    cookies[who] =
      `next-auth.session-token=${await mintSessionToken({ id: u.id, email: u.email, sessionVersion: u.sessionVersion })}`;
  }
  // A finished replay of the run, requested by the operator.
  const requester = await t.db.user.findUniqueOrThrow({ where: { email: operatorEmail } });
  await t.owner(
    `INSERT INTO replay (id, run_id, status, requested_by_id, reason, set_hash, total, sent, created_at, started_at, finished_at)
     VALUES (gen_random_uuid(), $1, 'completed', $2, 'provider outage', 'h', 3, 3, now(), now(), now() + interval '1.5 seconds')`,
    [runId, requester.id],
  );
});

const query = (sp: Record<string, string> = {}, limit?: number): TimelineQuery => ({
  ...timelineQuery(sp),
  ...(limit ? { limit } : {}),
});

/** Every event of the run, page by page. */
async function walk(sp: Record<string, string>, limit: number): Promise<TimelineEvent[]> {
  const seen: TimelineEvent[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 200; pages++) {
    const page = await runTimeline(t.db, runId, EVERY_WORKFLOW, query({ ...sp, ...(cursor ? { cursor } : {}) }, limit));
    seen.push(...page!.events);
    if (!page!.next) return seen;
    cursor = page!.next;
  }
  throw new Error('the timeline did not end');
}

async function view(who: keyof typeof cookies, id: string, search = '') {
  const { GET } = await import('@/app/api/console/views/timeline/[runId]/route.ts');
  const headers = new Headers({ host: 'console.test', cookie: cookies[who] });
  const response = await GET(
    new Request(`http://console.test/api/console/views/timeline/${id}${search}`, { headers }),
    {
      params: Promise.resolve({ runId: id }),
    },
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('a run’s timeline', () => {
  it('merges every kind in time order, oldest first, with who by name and durations', async () => {
    const all = (await runTimeline(t.db, runId, EVERY_WORKFLOW, query({ order: 'oldest' }, 100)))!.events;
    const kinds = new Set(all.map((e) => e.kind));
    expect([...kinds].sort()).toEqual(['answer', 'attempt', 'claim', 'decision', 'replay', 'transition']);
    for (let i = 1; i < all.length; i++) expect(all[i]!.at.getTime()).toBeGreaterThanOrEqual(all[i - 1]!.at.getTime());

    // The claim's entry is stamped by the audit trigger a moment after the call's row in the same
    // statement: the two come first in either order, then the change to done, then the answer.
    const mine = all.filter((e) => e.key === done.key);
    expect(
      mine
        .map((e) => e.kind)
        .slice(0, 2)
        .sort(),
    ).toEqual(['attempt', 'claim']);
    expect(mine.map((e) => e.kind).slice(2)).toEqual(['transition', 'answer']);
    const claim = mine.find((e) => e.kind === 'claim')!;
    const call = mine.find((e) => e.kind === 'attempt')!;
    const [transition, answer] = mine.slice(2) as [TimelineEvent, TimelineEvent];
    expect(claim.who).toBe(runtime.label);
    expect(call.who).toBe(runtime.label);
    expect(answer).toMatchObject({ who: provider, whoKind: 'provider', what: 'HTTP 250', target: done.input.target });
    expect(call.durationMs).toBeCloseTo(answer.at.getTime() - call.at.getTime(), -1);
    expect(transition).toMatchObject({ what: 'effect.complete', fromState: 'pending', toState: 'done' });
    // Time in the state it left: from the claim (pending) to done.
    expect(transition.durationMs).toBeCloseTo(transition.at.getTime() - claim.at.getTime(), -1);

    const decisions = all.filter((e) => e.kind === 'decision').map((e) => [e.key, e.what, e.whoKind]);
    expect(decisions).toEqual(
      expect.arrayContaining([
        [revoked.key, 'effect.revoke', 'user'],
        [awaiting.key, 'effect.resolve_not_sent', 'user'],
      ]),
    );
    const replay = all.find((e) => e.kind === 'replay')!;
    expect(replay).toMatchObject({ who: operatorEmail, what: 'replay completed', durationMs: 1500 });
  });

  it('pages without gaps or repeats in either order, one event a page through four of one microsecond', async () => {
    for (const order of ['newest', 'oldest']) {
      const whole = (await runTimeline(t.db, runId, EVERY_WORKFLOW, query({ order }, 100)))!.events.map((e) => e.id);
      expect(new Set(whole).size).toBe(whole.length);
      for (const size of [1, 3, 7]) expect((await walk({ order }, size)).map((e) => e.id)).toEqual(whole);
    }
    const calls = await walk({ kind: 'attempt', order: 'oldest' }, 1);
    const tiedShown = calls.filter((e) => e.at.toISOString() === '2026-01-02T03:04:05.123Z').map((e) => e.id);
    expect(tiedShown).toEqual([...tied].sort().map((id) => `t${id}`));
  });

  it('filters by kinds and by the target as shown, in any letter case', async () => {
    const some = await walk({ kind: 'decision,replay' }, 100);
    expect(new Set(some.map((e) => e.kind))).toEqual(new Set(['decision', 'replay']));
    const target = await walk({ target: done.input.target.toUpperCase(), order: 'oldest' }, 100);
    expect(target.map((e) => e.kind).sort()).toEqual(['answer', 'attempt', 'claim', 'transition']);
    expect(new Set(target.map((e) => e.key))).toEqual(new Set([done.key]));
    expect(await walk({ target: 'nobody@example.com' }, 100)).toEqual([]);
  });

  it('Z1: the view answers 404 to a person without a role on the run’s workflow, and 200 to one with', async () => {
    const theirs = await view('scoped', runId);
    expect(theirs.status).toBe(404);
    expect(JSON.stringify(theirs.body)).not.toContain(done.key);
    expect(await runTimeline(t.db, runId, { all: false, workflows: [wf.other] }, query())).toBeNull();
    const ok = await view('everywhere', runId, '?kind=claim&rows=25');
    expect(ok.status).toBe(200);
    const events = (ok.body.view as { events: { kind: string }[] }).events;
    expect(events.length).toBe(8); // done, revoked, awaiting, failed and the four tied calls
    expect(events.every((e) => e.kind === 'claim')).toBe(true);
    expect((await view('everywhere', randomUUID())).status).toBe(404);
  });

  it('refuses a malformed cursor, kind or order with a 422 naming it', async () => {
    for (const [search, field] of [
      ['?cursor=not-a-cursor', 'cursor'],
      [`?cursor=${Buffer.from(JSON.stringify(['2026-01-02', 'x'])).toString('base64url')}`, 'cursor'],
      ['?kind=claim,sms', 'kind'],
      ['?order=sideways', 'order'],
    ] as const) {
      const got = await view('everywhere', runId, search);
      expect(got.status).toBe(422);
      expect(got.body).toMatchObject({ code: 'validation', field });
      expect(String(got.body.detail)).toContain(field);
    }
  });
});
