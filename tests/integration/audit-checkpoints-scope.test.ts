// Z1, A2: the signed checkpoints, the export and the public key as a person scoped to one workflow
// downloads them from the console routes. Checkpoints are per chain, so the scoped person gets those
// of the chains whose entries (up to the signed seq) are all theirs: nothing names a chain of another
// workflow or of no run, nor counts the entries of a chain holding some they may not see. Their
// export, checked against their checkpoints (unfiltered, so a rewound chain would be reported), verifies.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendAudit } from '@/lib/audit/append.ts';
import { listCheckpoints, loadCheckpointKey, signChainHeads } from '@/lib/audit/checkpoint.ts';
import type { CheckpointsFile } from '@/lib/sdk/audit/checkpoint-signature.ts';
import { verifyExport } from '@/lib/sdk/audit/verify-export.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { createSignerDb } from '../helpers/audit-signer.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, suffix, userActor, type TestEffect } from '../helpers/factories.ts';

let t: TestDatabase;
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const signingPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const system = { kind: 'system' as const, id: 'test', label: 'test setup' };
const wf = { mine: `mine_${suffix()}`, theirs: `theirs_${suffix()}` };
const cookies = {} as Record<'scoped' | 'everywhere', string>;
let mine: TestEffect;
let theirs: TestEffect;
/** A chain whose first entry is about the scoped person's run and whose second is about no run. */
let mixedChain: string;
let refusal: (runId: string | null) => Promise<void>;

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 6 });
  process.env.DATABASE_URL = t.appUrl;
  process.env.NEXTAUTH_SECRET = 'audit-checkpoints-scope-secret';
  process.env.AUDIT_SIGNING_KEY = signingPem;
  resetEnvCache();
  const key = loadCheckpointKey(signingPem);
  mine = await makeEffect(t.db, 'done', { runId: (await makeRun(t.db, wf.mine)).runId });
  theirs = await makeEffect(t.db, 'done', { runId: (await makeRun(t.db, wf.theirs)).runId });
  mixedChain = `refused:effect:${mine.key}`;
  refusal = (runId: string | null) =>
    appendAudit(t.db, {
      chain: `effect:${mine.key}`,
      actor: userActor('support'),
      action: 'effect.revoke',
      subjectType: 'effect',
      subjectId: mine.key,
      runId,
      outcome: 'refused',
      reason: 'no role that may revoke',
    });
  await refusal(mine.runId);
  const signer = (await createSignerDb(t)).db;
  expect((await signChainHeads(signer, key)).signed).toBeGreaterThan(0);
  // The chain's next entry is one the scoped person may not see: its head is signed again at seq 2.
  await refusal(null);
  await signChainHeads(signer, key);

  const { insertUser } = await import('@/lib/auth/users.ts');
  const { addGrant, removeGrant } = await import('@/lib/auth/grant-commands.ts');
  const { mintSessionToken } = await import('@/lib/auth/session.ts');
  for (const who of ['scoped', 'everywhere'] as const) {
    const u = await insertUser(
      t.db,
      { email: `${who}-${randomUUID()}@example.com`, name: who, role: 'auditor', password: 'a-long-enough-password' },
      system,
    );
    if (who === 'scoped') {
      const all = await t.db.roleGrant.findFirstOrThrow({ where: { userId: u.id, workflow: null } });
      await addGrant({ db: t.db, actor: system }, { userId: u.id, role: 'auditor', workflow: wf.mine, reason: 'team' });
      await removeGrant({ db: t.db, actor: system }, { grantId: all.id, reason: 'their workflow only' });
    }
    const token = await mintSessionToken({ id: u.id, email: u.email, sessionVersion: u.sessionVersion });
    cookies[who] = `next-auth.session-token=${token}`;
  }
});

const routes = {
  checkpoints: () => import('@/app/api/console/audit/checkpoints/route.ts'),
  export: () => import('@/app/api/console/audit/export/route.ts'),
  'public-key': () => import('@/app/api/console/audit/public-key/route.ts'),
};

async function download(route: keyof typeof routes, who: keyof typeof cookies, query = '') {
  const { GET } = await routes[route]();
  const headers = new Headers({ host: 'console.test', cookie: cookies[who] });
  const response: Response = await GET(
    new Request(`http://console.test/api/console/audit/${route}${query}`, { headers }),
    undefined as never,
  );
  return { status: response.status, text: await response.text(), headers: response.headers };
}

const checkpointsAs = async (who: keyof typeof cookies): Promise<CheckpointsFile> => {
  const got = await download('checkpoints', who);
  expect(got.status).toBe(200);
  return JSON.parse(got.text) as CheckpointsFile;
};

describe('Z1: signed checkpoints for a person scoped to one workflow', () => {
  it('A2: holds the chains of their workflow only, and a chain with an entry they may not see only up to it', async () => {
    const file = await checkpointsAs('scoped');
    const text = JSON.stringify(file);
    expect(text).not.toContain(theirs.key);
    expect(text).not.toContain(theirs.runId);
    const chains = new Set(file.checkpoints.map((c) => c.chain));
    expect(chains).toContain(`run:${mine.runId}`);
    expect(chains).toContain(`effect:${mine.key}`);
    expect(file.checkpoints.filter((c) => c.chain === mixedChain).map((c) => c.seq)).toEqual([1]);
    // Every entry each checkpoint covers is about a run of the person's workflow.
    const outside = await t.owner<{ chain: string; seq: number }>(
      `SELECT a.chain, a.seq FROM audit_entry a
        WHERE a.chain = ANY($1::text[])
          AND a.seq <= (SELECT max(x.seq) FROM jsonb_to_recordset($2::jsonb) AS x(chain text, seq int) WHERE x.chain = a.chain)
          AND NOT EXISTS (SELECT 1 FROM run r WHERE r.id = a.run_id AND r.workflow = $3)`,
      [[...chains], JSON.stringify(file.checkpoints.map(({ chain, seq }) => ({ chain, seq }))), wf.mine],
    );
    expect(outside.rows).toEqual([]);
  });

  it('a person on every workflow gets every checkpoint', async () => {
    const file = await checkpointsAs('everywhere');
    expect(file.checkpoints).toEqual(await listCheckpoints(t.db));
    expect(file.checkpoints.map((c) => c.chain)).toContain(`effect:${theirs.key}`);
    expect(file.checkpoints.filter((c) => c.chain === mixedChain).map((c) => c.seq)).toEqual([1, 2]);
  });

  it('A2/A5: their export holds nothing of the other workflow and verifies against their checkpoints', async () => {
    const checkpoints = await checkpointsAs('scoped');
    const exported = await download('export', 'scoped', '?format=jsonl');
    expect(exported.status).toBe(200);
    expect(exported.text).not.toContain(theirs.key);
    expect(exported.text).not.toContain(theirs.runId);
    const summary = JSON.parse(exported.text.trim().split('\n').at(-1)!) as { export: { filtered: boolean } };
    expect(summary.export.filtered).toBe(false); // so a checkpointed chain missing from it would be a rewind
    const result = verifyExport(exported.text, { file: checkpoints, publicKeys: [publicPem] });
    expect(result).toMatchObject({ ok: true, checkpointsChecked: checkpoints.checkpoints.length });
  });

  it('A5: an export leaving out an entry inside one of its chains says filtered, and still verifies', async () => {
    // The mixed chain goes on with the person's own run: seq 1 and 3 are theirs, seq 2 is not.
    await refusal(mine.runId);
    const exported = await download('export', 'scoped', '?format=jsonl');
    const summary = JSON.parse(exported.text.trim().split('\n').at(-1)!) as { export: { filtered: boolean } };
    expect(summary.export.filtered).toBe(true);
    const checkpoints = await checkpointsAs('scoped');
    expect(verifyExport(exported.text, { file: checkpoints, publicKeys: [publicPem] })).toMatchObject({ ok: true });
    // The person on every workflow gets the chain whole: nothing left out, nothing filtered.
    const whole = await download('export', 'everywhere', '?format=jsonl');
    expect(JSON.parse(whole.text.trim().split('\n').at(-1)!)).toMatchObject({ export: { filtered: false } });
    expect(verifyExport(whole.text)).toMatchObject({ ok: true });
  });

  it('the public key is the same for them as for everyone', async () => {
    const key = await download('public-key', 'scoped');
    expect(key.status).toBe(200);
    expect(key.text).toBe(publicPem);
  });
});
