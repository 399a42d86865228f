// Live pages: the change feed (lib/live) on real PostgreSQL, and its server-sent event route with real
// next-auth session cookies. A change made through the ledger's commands reaches a subscriber within a
// tick and names its run; a page about another run is not told; a transaction that took a lower audit
// id but commits later is still reported; the route refuses a signed-out cookie, stops when the
// browser goes away and caps its streams per process.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AuthOptions } from 'next-auth';
import type { JWT } from 'next-auth/jwt';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startPgBouncer } from '../helpers/pgbouncer.ts';
import { createDb } from '@/lib/db/client.ts';
import { makeEffect, makeRun, suffix, userActor } from '../helpers/factories.ts';
import { makeCampaign, until } from './replay-fixtures.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { appendAudit } from '@/lib/audit/append.ts';
import { changeMatches, type LiveChange } from '@/lib/live/change.ts';
import { ChangeFeed } from '@/lib/live/feed.ts';
import { completeEffect, resolveUnknown } from '@/lib/ledger/index.ts';
import { requestReplay } from '@/lib/replay/index.ts';
import { setOutcome } from '@/lib/replay/item-outcome.ts';

let t: TestDatabase;
const feeds: ChangeFeed[] = [];

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 8 });
});

afterAll(() => {
  // Every test stops its own subscriptions; a feed left with one would keep polling a dropped database.
  expect(feeds.map((f) => f.subscribers)).toEqual(feeds.map(() => 0));
});

async function listen(feed: ChangeFeed) {
  const events: LiveChange[] = [];
  const stop = await feed.subscribe((c) => events.push(c));
  return { events, stop };
}

function newFeed(maxSubscribers = 5) {
  const feed = new ChangeFeed(() => t.db, { intervalMs: 100, maxSubscribers });
  feeds.push(feed);
  return feed;
}

const touches = (runId: string) => (e: LiveChange) => e.runs?.includes(runId) ?? false;

describe('live pages: the change feed', () => {
  it('a transition of one run reaches the subscriber with its run; a page about another run is not told', async () => {
    const a = await makeEffect(t.db, 'pending');
    const b = await makeEffect(t.db, 'pending');
    const feed = newFeed();
    const { events, stop } = await listen(feed);
    const pageOfA = { runId: a.runId, topics: ['effect', 'replay', 'plan'] as const };

    await completeEffect({ db: t.db, actor: b.runtime }, { key: b.key, epoch: 1, receipt: `msg-${suffix()}` });
    const seenB = await until('the change of run B', async () => events.find(touches(b.runId)));
    expect(seenB.topics).toContain('effect');
    expect(seenB.runs).not.toContain(a.runId);
    expect(events.some((e) => changeMatches(e, pageOfA))).toBe(false);

    await completeEffect({ db: t.db, actor: a.runtime }, { key: a.key, epoch: 1, receipt: `msg-${suffix()}` });
    const seenA = await until('the change of run A', async () => events.find(touches(a.runId)));
    expect(changeMatches(seenA, pageOfA)).toBe(true);
    expect(seenA.workflows.length).toBe(1);
    stop();
    expect(feed.subscribers).toBe(0);
  });

  it('an unknown resolved is an "unknown" change (the support queue); a plain completion is not', async () => {
    const u = await makeEffect(t.db, 'unknown');
    const d = await makeEffect(t.db, 'pending');
    const { events, stop } = await listen(newFeed());
    await completeEffect({ db: t.db, actor: d.runtime }, { key: d.key, epoch: 1, receipt: `msg-${suffix()}` });
    const done = await until('the completion', async () => events.find(touches(d.runId)));
    expect(done.topics).not.toContain('unknown');
    await resolveUnknown(
      { db: t.db, actor: userActor('support') },
      { key: u.key, epoch: 1, outcome: 'sent', receipt: 'ticket-123', reason: 'the provider shows it delivered' },
    );
    const resolved = await until('the resolution', async () => events.find(touches(u.runId)));
    expect(resolved.topics).toEqual(expect.arrayContaining(['effect', 'unknown']));
    expect(changeMatches(resolved, { topics: ['unknown'] })).toBe(true);
    stop();
  });

  it('F5: replay progress (counters the executor moves without an audit entry) is a "replay" change of its run', async () => {
    const c = await makeCampaign(t.db, { not_sent: 3 }, { fourEyesReplay: false, provider: 'sandbox' });
    const operator = userActor('operator');
    const { events, stop } = await listen(newFeed());
    const req = await requestReplay({ db: t.db, actor: operator }, { runId: c.runId, confirmCount: 3, reason: 'x' });
    await until('the request', async () => events.find((e) => touches(c.runId)(e) && e.topics.includes('replay')));
    const before = events.length;
    const [item] = await t.db.replayItem.findMany({ where: { replayId: req.replayId }, take: 1 });
    await setOutcome(t.db, req.replayId, item!.id, 'skipped', 'live feed test');
    const progress = await until('the progress', async () => events.slice(before).find(touches(c.runId)));
    expect(progress.topics).toEqual(['replay']);
    stop();
  });

  it('an audit id taken earlier but committed after a higher one is still reported', async () => {
    const early = await makeRun(t.db);
    const late = await makeEffect(t.db, 'pending');
    const { events, stop } = await listen(newFeed());
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let wrote!: () => void;
    const written = new Promise<void>((r) => (wrote = r));
    const slow = t.db.$transaction(
      async (tx) => {
        await appendAudit(tx, {
          chain: `run:${early.runId}`,
          actor: { kind: 'system', id: 'test', label: 'test' },
          action: 'run.crashed',
          subjectType: 'run',
          subjectId: early.runId,
          runId: early.runId,
        });
        wrote();
        await held;
      },
      { timeout: 60_000 },
    );
    await written;
    await completeEffect({ db: t.db, actor: late.runtime }, { key: late.key, epoch: 1, receipt: `msg-${suffix()}` });
    await until('the later commit', async () => events.find(touches(late.runId)));
    expect(events.some(touches(early.runId))).toBe(false);
    release();
    await slow;
    const seen = await until('the earlier id', async () => events.find(touches(early.runId)));
    expect(seen.topics).toContain('run');
    stop();
  });

  it('two web processes polling through PgBouncer in transaction mode both see a change (no session state needed)', async () => {
    const server = new URL(inject('ownerUrl'));
    const bouncer = await startPgBouncer(
      { host: server.hostname, port: Number(server.port) },
      { [inject('appUser')]: inject('appPassword') },
    );
    const pooled = [createDb(bouncer.through(t.appUrl), 2), createDb(bouncer.through(t.appUrl), 2)];
    try {
      const processes = pooled.map((client) => new ChangeFeed(() => client, { intervalMs: 100, maxSubscribers: 5 }));
      const listeners = await Promise.all(processes.map(listen));
      const e = await makeEffect(t.db, 'pending');
      await completeEffect({ db: t.db, actor: e.runtime }, { key: e.key, epoch: 1, receipt: `msg-${suffix()}` });
      for (const l of listeners) await until('the change in each process', async () => l.events.find(touches(e.runId)));
      for (const l of listeners) l.stop();
    } finally {
      await Promise.all(pooled.map((c) => c.$disconnect()));
      await bouncer.stop();
    }
  });

  it('a process serves at most its maximum of subscribers (429), and a freed place is taken again', async () => {
    const feed = newFeed(2);
    const one = await listen(feed);
    const two = await listen(feed);
    await expect(listen(feed)).rejects.toMatchObject({ code: 'rate_limited' });
    one.stop();
    const three = await listen(feed);
    expect(feed.subscribers).toBe(2);
    two.stop();
    three.stop();
    expect(feed.subscribers).toBe(0);
  });
});

describe('live pages: the server-sent event route', () => {
  let options: AuthOptions;
  let jwt: typeof import('next-auth/jwt');
  let insertUser: typeof import('@/lib/auth/users.ts').insertUser;
  let route: typeof import('@/app/api/console/events/route.ts');
  let feedModule: typeof import('@/lib/live/feed.ts');
  const PASSWORD = 'a-long-enough-password';

  beforeAll(async () => {
    process.env.DATABASE_URL = t.appUrl;
    process.env.NEXTAUTH_SECRET = 'live-feed-test-secret';
    process.env.LIVE_POLL_MS = '100';
    process.env.LIVE_MAX_CONNECTIONS = '2';
    resetEnvCache();
    options = (await import('@/lib/auth/options.ts')).authOptions();
    jwt = await import('next-auth/jwt');
    insertUser = (await import('@/lib/auth/users.ts')).insertUser;
    route = await import('@/app/api/console/events/route.ts');
    feedModule = await import('@/lib/live/feed.ts');
  });

  async function signIn(role: 'support' | 'auditor'): Promise<string> {
    const email = `${role}-${suffix()}@example.com`;
    await insertUser(t.db, { email, name: role, role, password: PASSWORD }, { kind: 'system', id: 't', label: 't' });
    const provider = options.providers[0] as unknown as {
      options: { authorize: (c: Record<string, string>, req: unknown) => Promise<Record<string, unknown> | null> };
    };
    const user = await provider.options.authorize(
      { email, password: PASSWORD },
      { headers: { 'x-forwarded-for': '198.51.100.9', 'user-agent': 'vitest' } },
    );
    const token = await options.callbacks!.jwt!({
      token: { sub: String(user!.id), email } as JWT,
      user: user as never,
      account: { provider: 'credentials', type: 'credentials', providerAccountId: String(user!.id) },
    });
    return `next-auth.session-token=${await jwt.encode({ token, secret: options.secret!, maxAge: 3600 })}`;
  }

  async function signOut(cookie: string) {
    const token = await jwt.decode({ token: cookie.slice(cookie.indexOf('=') + 1), secret: options.secret! });
    await options.events!.signOut!({ token: token as JWT, session: undefined as never });
  }

  function open(cookie: string | null) {
    const abort = new AbortController();
    const headers = new Headers({ host: 'console.test', 'x-request-id': randomUUID() });
    if (cookie) headers.set('cookie', cookie);
    const req = new Request('http://console.test/api/console/events', { headers, signal: abort.signal });
    return { abort, response: route.GET(req, undefined as never) };
  }

  /** Reads frames until one named `event` satisfies `ok`. */
  async function nextEvent(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    event: string,
    ok: (data: Record<string, unknown>) => boolean = () => true,
  ) {
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (name === event && data && ok(JSON.parse(data) as Record<string, unknown>)) return JSON.parse(data);
        end = buffer.indexOf('\n\n');
      }
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before a ${event} event`);
      buffer += decoder.decode(value, { stream: true });
    }
  }

  it('without a session, or with a signed-out one, the route answers 401 problem+json and subscribes nobody', async () => {
    const none = await open(null).response;
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toContain('application/problem+json');
    const cookie = await signIn('auditor');
    await signOut(cookie);
    const revoked = await open(cookie).response;
    expect(revoked.status).toBe(401);
    expect((await revoked.json()).detail).toContain('signed out');
    expect(feedModule.liveFeed().subscribers).toBe(0);
  });

  it('a stream whose session is signed out meanwhile says so at the next heartbeat and ends', async () => {
    const { liveEventStream } = await import('@/lib/live/stream.ts');
    const { sessionFromCookie } = await import('@/lib/auth/session.ts');
    const cookie = await signIn('auditor');
    const feed = newFeed();
    const stream = await liveEventStream({
      subscribe: (l) => feed.subscribe(l),
      stillSignedIn: async () => !(await sessionFromCookie(cookie, t.db)).problem,
      signal: new AbortController().signal,
      heartbeatMs: 200,
    });
    const reader = stream.getReader();
    await nextEvent(reader, 'ready');
    await nextEvent(reader, 'heartbeat');
    expect(feed.subscribers).toBe(1);
    await signOut(cookie);
    await nextEvent(reader, 'signed-out');
    expect((await reader.read()).done).toBe(true);
    expect(feed.subscribers).toBe(0);
  });

  it('Z1: a grant removed while the stream is open narrows it from the next heartbeat: that workflow is not named again', async () => {
    const { viewerLiveStream } = await import('@/lib/live/viewer-stream.ts');
    const cookie = await signIn('support');
    const token = await jwt.decode({ token: cookie.slice(cookie.indexOf('=') + 1), secret: options.secret! });
    const userId = String(token!.uid);
    const kept = `kept_${suffix()}`;
    const dropped = `dropped_${suffix()}`;
    // Test setup: support on two workflows instead of all of them.
    await t.owner('DELETE FROM role_grant WHERE user_id = $1', [userId]);
    for (const workflow of [kept, dropped])
      await t.owner(
        `INSERT INTO role_grant (id, user_id, role, workflow) VALUES (gen_random_uuid(), $1, 'support', $2)`,
        [userId, workflow],
      );
    const abort = new AbortController();
    const stream = await viewerLiveStream({
      db: t.db,
      cookie,
      scope: { all: false, workflows: [dropped, kept].sort() },
      signal: abort.signal,
      heartbeatMs: 200,
    });
    const reader = stream.getReader();
    await nextEvent(reader, 'ready');
    await t.owner('DELETE FROM role_grant WHERE user_id = $1 AND workflow = $2', [userId, dropped]);
    await nextEvent(reader, 'heartbeat');
    const theirs = await makeEffect(t.db, 'pending', { runId: (await makeRun(t.db, dropped)).runId });
    const mine = await makeEffect(t.db, 'pending', { runId: (await makeRun(t.db, kept)).runId });
    const seen: Record<string, unknown>[] = [];
    await nextEvent(reader, 'change', (d) => {
      seen.push(d);
      return (d.workflows as string[]).includes(kept) && (d.runs === null || (d.runs as string[]).includes(mine.runId));
    });
    expect(JSON.stringify(seen)).not.toContain(dropped);
    expect(JSON.stringify(seen)).not.toContain(theirs.runId);
    abort.abort();
  });

  it('a signed-in stream gets ready, then the change of a run; closing it unsubscribes; a third stream is refused', async () => {
    const cookie = await signIn('support');
    const first = open(cookie);
    const res = await first.response;
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    await nextEvent(reader, 'ready');
    const e = await makeEffect(t.db, 'pending');
    await completeEffect({ db: t.db, actor: e.runtime }, { key: e.key, epoch: 1, receipt: `msg-${suffix()}` });
    // The run's creation and the claim may come in an earlier tick than the completion: wait for the effect.
    const change = await nextEvent(
      reader,
      'change',
      (d) => ((d.runs as string[] | null)?.includes(e.runId) ?? false) && (d.topics as string[]).includes('effect'),
    );
    expect(change.runs).toContain(e.runId);

    const second = open(cookie);
    expect((await second.response).status).toBe(200);
    const third = await open(cookie).response;
    expect(third.status).toBe(429);
    expect(await third.json()).toMatchObject({ code: 'rate_limited' });
    expect(feedModule.liveFeed().subscribers).toBe(2);

    first.abort.abort();
    second.abort.abort();
    await until('both streams unsubscribed', async () => feedModule.liveFeed().subscribers === 0, 10_000);
  });
});
