// The management API's decisions under concurrent callers (BENCH_ONLY=manage): 8 operators, each
// with their own personal access token, revoke done effects one key per call over real HTTP through
// the production front (scripts/support/api-router.ts), each call naming the key's version (Z8).
// The floor is the same lib command (revokeEffect) called in process by 8 concurrent callers on
// keys in the same state: what the API adds is the HTTP round trip, reading the token's person and
// grants, the guard's workflow check, the version check and the token's own audit entry.
// Sizes: BENCH_MANAGE_DECISIONS (per path, default 800), BENCH_MANAGE_CALLERS (default 8).
import { createAccessToken } from '@/lib/auth/access-tokens.ts';
import { insertUser } from '@/lib/auth/users.ts';
import { createDb } from '@/lib/db/client.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { claimEffect, completeEffect, createRun, revokeEffect, type Actor } from '@/lib/ledger/index.ts';
import { seenEffect } from '@/lib/ledger/seen-version.ts';
import { alternatingRounds, percentile, progress, type BenchDatabase, type LoadResult } from './harness.ts';
import { startApiServer } from './sdk-http-server.ts';

export interface ManageBench {
  decisions: number;
  callers: number;
  direct: LoadResult;
  api: LoadResult;
  directP95: number;
  apiP95: number;
}

const system: Actor = { kind: 'system', id: 'bench', label: 'bench setup' };
const runtime: Actor = { kind: 'runtime', id: 'bench-rt', label: 'bench runtime', workflows: ['*'] };

export async function benchManage(opts: BenchDatabase & { decisions: number; callers: number }): Promise<ManageBench> {
  // The guard reads the app's own client (DATABASE_URL), as the production server does.
  process.env.DATABASE_URL = opts.appUrl;
  resetEnvCache();
  const db = createDb(opts.appUrl, opts.callers + 4);
  const api = await startApiServer(opts.appUrl, opts.callers + 4);
  try {
    const tool = await db.toolDefinition.create({
      data: {
        name: `bench_manage_${Date.now()}`,
        actions: ['receipt'],
        targetType: 'email',
        provider: 'sandbox',
        generatedInputs: [],
      },
    });
    const run = await createRun({ db, actor: system }, { workflow: 'bench-manage', triggerId: `evt_${Date.now()}` });
    const people: { actor: Actor; token: string }[] = [];
    for (let i = 0; i < opts.callers; i++) {
      const email = `bench-op-${i}-${Date.now()}@example.com`;
      const u = await insertUser(
        db,
        { email, name: `op ${i}`, role: 'operator', password: 'a-long-enough-password' },
        system,
      );
      const actor = { kind: 'user' as const, id: u.id, label: email, role: 'operator' as const };
      const t = await createAccessToken({ db, actor }, { name: 'bench', expiresInDays: 1 });
      people.push({ actor, token: t.token });
    }
    const keys = { 'direct command': [] as string[], 'management API': [] as string[] };
    const seen = new Map<string, ReturnType<typeof seenEffect>>();
    const tick = progress('manage: done effects');
    for (let i = 0; i < opts.decisions * 2; i++) {
      const c = await claimEffect(
        { db, actor: runtime },
        { runId: run.runId, tool: tool.name, action: 'receipt', recordId: `r${i}`, target: `m${i}@example.com` },
      );
      if (!c.claimed) throw new Error('bench key already claimed');
      await completeEffect({ db, actor: runtime }, { key: c.key, receipt: `msg-${i}` });
      (i % 2 ? keys['management API'] : keys['direct command']).push(c.key);
      tick(i + 1, opts.decisions * 2);
    }
    for (const head of await db.effectKey.findMany({ where: { runId: run.runId } }))
      seen.set(head.key, seenEffect({ epoch: head.currentEpoch, state: head.state, changedAt: head.changedAt }));

    const results = await alternatingRounds(
      ['direct command', 'management API'] as const,
      opts.decisions,
      4,
      opts.callers,
      async (path, i) => {
        const key = keys[path][i]!;
        const who = people[i % people.length]!;
        const decision = { key, reason: 'bench: revoked by an operator', seen: seen.get(key) };
        if (path === 'direct command') return revokeEffect({ db, actor: who.actor }, decision);
        const res = await fetch(`${api.url}/api/v1/manage/effects/revoke`, {
          method: 'POST',
          headers: { authorization: `Bearer ${who.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ keys: [key], reason: decision.reason, seen: { [key]: decision.seen } }),
        });
        if (res.status !== 200) throw new Error(`management API answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      },
    );
    const direct = results['direct command'];
    const viaApi = results['management API'];
    return {
      decisions: opts.decisions,
      callers: opts.callers,
      direct,
      api: viaApi,
      directP95: percentile(direct.samples, 95),
      apiP95: percentile(viaApi.samples, 95),
    };
  } finally {
    await api.stop();
    await db.$disconnect();
  }
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function manageLines(m: ManageBench): string[] {
  const row = (path: string, r: LoadResult, p95: number) =>
    `| ${path} | ${fmt(r.perSecond)} | ${fmt(r.p50ms, 2)} | ${fmt(p95, 2)} | ${fmt(r.p99ms, 2)} |`;
  return [
    `${fmt(m.decisions)} revocations per path by ${m.callers} concurrent operators, one key per decision, each naming the key's version; the two paths alternate in four rounds. **management API**: \`POST /api/v1/manage/effects/revoke\` over HTTP through the production front with each operator's personal access token (the person and grants read afresh, the guard, the Z8 check, the command, and the call's own \`access_token.use\` entry). **direct command** (the floor): \`revokeEffect\` called in process on keys in the same state.`,
    '',
    '| path | decisions/s | p50 ms | p95 ms | p99 ms |',
    '|---|---:|---:|---:|---:|',
    row('direct command', m.direct, m.directP95),
    row('management API', m.api, m.apiP95),
    '',
    `Management API p95 / direct command p95: **${fmt(m.apiP95 / m.directP95, 2)}**; throughput ratio ${fmt(m.api.perSecond / m.direct.perSecond, 2)}.`,
    '',
  ];
}
