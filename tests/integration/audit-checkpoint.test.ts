// A2, A3: signed checkpoints hold the trail against its own database owner. Chain heads are signed
// with Ed25519 (the key from configuration) and stored append-only, the signing audited in the same
// transaction; the public key downloads from the console for anyone signed in; an export checked
// against the checkpoints passes, and after the owner rewinds a chain head (triggers disabled, the
// last entries deleted, the head row moved back) or rewrites an entry with recomputed hashes, the
// offline verifier names the chain and seq, in the library and through `npm run audit:verify`.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendAudit } from '@/lib/audit/append.ts';
import { entryHash, type ExportedEntry } from '@/lib/sdk/audit/canonical.ts';
import { CHECKPOINT_CHAIN, listCheckpoints, loadCheckpointKey, signChainHeads } from '@/lib/audit/checkpoint.ts';
import { startCheckpointSchedule } from '@/lib/audit/checkpoint-schedule.ts';
import { publicKeysById, type CheckpointsFile } from '@/lib/sdk/audit/checkpoint-signature.ts';
import { verifyAuditTrail } from '@/lib/audit/verify.ts';
import { verifyExport } from '@/lib/sdk/audit/verify-export.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { auditExportStream, exportSummary, jsonLine } from '@/lib/read-models/audit-export.ts';
import type { Db } from '@/lib/db/client.ts';
import { createSignerDb } from '../helpers/audit-signer.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect, suffix, userActor } from '../helpers/factories.ts';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';

let t: TestDatabase;
/** The signer's own connection: the only one (with the owner's) that may store checkpoints. */
let signer: Db;
let signerUrl: string;
const dir = mkdtempSync(path.join(tmpdir(), 'audit-checkpoint-'));
const pair = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
};
const signing = pair();
const key = loadCheckpointKey(signing.privatePem);
const chain = `user:checkpointed-${suffix()}`;

async function exportAll(): Promise<string> {
  const summary = exportSummary(false, EVERY_WORKFLOW);
  let out = '';
  for await (const e of auditExportStream(t.db, {}, EVERY_WORKFLOW)) {
    summary.add(e);
    out += jsonLine(e);
  }
  return out + summary.line();
}
const checkpointsFile = async (): Promise<CheckpointsFile> => ({
  format: 'effect-ledger-checkpoints',
  version: 1,
  checkpoints: await listCheckpoints(t.db),
});
const save = (name: string, text: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
};
function script(
  file: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; output: string }> {
  // undefined removes a variable the test process may hold.
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const name of Object.keys(env)) if (env[name] === undefined) delete childEnv[name];
  return new Promise((resolve) => {
    const child = spawn('node', ['--import', 'tsx', file, ...args], { cwd: process.cwd(), env: childEnv });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

const verifyCli = (args: string[]) => script('scripts/audit-verify.ts', args);
const newChain = (name: string) =>
  appendAudit(t.db, {
    chain: name,
    actor: userActor('admin'),
    action: 'user.create',
    subjectType: 'user',
    subjectId: name,
  });
const checkpointsOf = async (name: string) => (await listCheckpoints(t.db)).filter((c) => c.chain === name);

let before: { jsonl: string; checkpoints: CheckpointsFile };

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 10 });
  ({ db: signer, url: signerUrl } = await createSignerDb(t));
  await makeEffect(t.db, 'done');
  for (let i = 0; i < 5; i++)
    await appendAudit(t.db, {
      chain,
      actor: userActor('admin'),
      action: 'user.create',
      subjectType: 'user',
      subjectId: 'checkpointed',
      detail: { i },
    });
});

describe('signed checkpoints (A2)', () => {
  it('A3: signs every chain head once, audited in the same transaction, append-only for app and owner', async () => {
    const heads = await t.owner<{ n: string }>('SELECT count(*) AS n FROM audit_chain_head');
    const first = await signChainHeads(signer, key);
    expect(first).toEqual({ signed: Number(heads.rows[0]!.n), rewound: [], untrusted: [] });
    // Only the signing's own entry moved: nothing to sign again.
    expect(await signChainHeads(signer, key)).toEqual({ signed: 0, rewound: [], untrusted: [] });
    const audited = await t.owner(`SELECT detail FROM audit_entry WHERE chain = $1 AND action = 'audit.checkpoint'`, [
      CHECKPOINT_CHAIN,
    ]);
    expect(audited.rows).toEqual([{ detail: { key_id: key.keyId, signed: first.signed, rewound: [] } }]);
    const mine = (await listCheckpoints(t.db)).filter((c) => c.chain === chain);
    expect(mine).toMatchObject([{ seq: 5, key_id: key.keyId }]);
    // The application role may not plant a checkpoint: only the signer's connection stores them.
    await expect(
      t.db.$executeRawUnsafe(
        `INSERT INTO audit_checkpoint (chain, seq, hash, signed_at, key_id, signature)
         VALUES ('${chain}', 9, repeat('a', 64), now(), '${key.keyId}', 'AAAA')`,
      ),
    ).rejects.toThrow(/permission denied/);
    await expect(t.db.$executeRawUnsafe('UPDATE audit_checkpoint SET seq = 1')).rejects.toThrow(/permission denied/);
    await expect(signer.$executeRawUnsafe('UPDATE audit_checkpoint SET seq = 1')).rejects.toThrow(/permission denied/);
    await expect(t.db.$executeRawUnsafe('DELETE FROM audit_checkpoint')).rejects.toThrow(/permission denied/);
    await expect(t.owner('DELETE FROM audit_checkpoint')).rejects.toThrow(/append-only/);
    await expect(t.owner('TRUNCATE audit_checkpoint')).rejects.toThrow(/append-only/);
  });

  it('an export verifies against the checkpoints, offline and through npm run audit:verify', async () => {
    // Checkpoints first, then the trail: every checkpoint is then at or below the exported heads.
    before = { checkpoints: await checkpointsFile(), jsonl: await exportAll() };
    const result = verifyExport(before.jsonl, { file: before.checkpoints, publicKeys: [signing.publicPem] });
    expect(result).toMatchObject({ ok: true });
    expect(result.ok && result.checkpointsChecked).toBe(before.checkpoints.checkpoints.length);
    const cli = await verifyCli([
      save('export.jsonl', before.jsonl),
      '--checkpoints',
      save('checkpoints.json', JSON.stringify(before.checkpoints)),
      '--public-key',
      save('key.pem', signing.publicPem),
    ]);
    expect(cli.output).toContain('signatures verify');
    expect(cli.code).toBe(0);
  });

  it('a forged signature or an unknown key id fails', () => {
    const forged = structuredClone(before.checkpoints);
    const target = forged.checkpoints.find((c) => c.chain === chain)!;
    target.hash = '0'.repeat(64);
    expect(verifyExport(before.jsonl, { file: forged, publicKeys: [signing.publicPem] })).toMatchObject({
      ok: false,
      chain,
      seq: 5,
      problem: expect.stringMatching(/does not verify/),
    });
    expect(verifyExport(before.jsonl, { file: before.checkpoints, publicKeys: [pair().publicPem] })).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/no given public key/),
    });
  });

  it('an entry rewritten with every hash recomputed is caught at its seq', () => {
    const lines = before.jsonl.trim().split('\n');
    const at = lines.findIndex((l) => l.includes(`"chain":"${chain}"`) && l.includes('"seq":5,'));
    const entry = JSON.parse(lines[at]!) as ExportedEntry;
    const rewritten = { ...entry, reason: 'never happened' };
    rewritten.hash = entryHash(rewritten);
    lines[at] = JSON.stringify(rewritten);
    const text = lines.join('\n') + '\n';
    expect(verifyExport(text)).toMatchObject({ ok: true }); // consistent on its own
    expect(verifyExport(text, { file: before.checkpoints, publicKeys: [signing.publicPem] })).toMatchObject({
      ok: false,
      line: at + 1,
      chain,
      seq: 5,
      problem: expect.stringMatching(/rewritten/),
    });
  });

  it('the owner rewinds a chain head: the database still verifies, the verifier names chain and seq', async () => {
    await t.owner(`
      ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_no_update;
      DELETE FROM audit_entry WHERE chain = '${chain}' AND seq > 3;
      UPDATE audit_chain_head h SET seq = 3, hash = e.hash FROM audit_entry e
       WHERE h.chain = '${chain}' AND e.chain = h.chain AND e.seq = 3;
      ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_no_update;`);
    expect(await verifyAuditTrail(t.db)).toMatchObject({ ok: true }); // what the owner hoped for
    const jsonl = await exportAll();
    expect(verifyExport(jsonl)).toMatchObject({ ok: true });
    const checkpoints = await checkpointsFile();
    expect(verifyExport(jsonl, { file: checkpoints, publicKeys: [signing.publicPem] })).toMatchObject({
      ok: false,
      chain,
      seq: 5,
      problem: expect.stringMatching(/rewound: the export ends at seq 3/),
    });
    const cli = await verifyCli([
      save('rewound.jsonl', jsonl),
      '--checkpoints',
      save('checkpoints-after.json', JSON.stringify(checkpoints)),
      '--public-key',
      save('key.pem', signing.publicPem),
    ]);
    expect(cli.output).toContain(`chain ${chain}, seq 5`);
    expect(cli.code).toBe(1);
    // The job refuses to sign over the rewound head and says so.
    expect((await signChainHeads(signer, key)).rewound).toEqual([{ chain, seq: 3, signedSeq: 5 }]);
  });
});

describe('key rotation (A2)', () => {
  it('A2: after a key rotation the new key signs the heads again, but not a head below one the old key signed: it reports the chain rewound', async () => {
    const rotated = `user:rotated-${suffix()}`;
    for (let i = 0; i < 3; i++) await newChain(rotated);
    await signChainHeads(signer, key);
    expect(await checkpointsOf(rotated)).toMatchObject([{ seq: 3, key_id: key.keyId }]);
    await t.owner(`
      ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_no_update;
      DELETE FROM audit_entry WHERE chain = '${rotated}' AND seq = 3;
      UPDATE audit_chain_head h SET seq = 2, hash = e.hash FROM audit_entry e
       WHERE h.chain = '${rotated}' AND e.chain = h.chain AND e.seq = 2;
      ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_no_update;`);

    const next = loadCheckpointKey(pair().privatePem);
    const round = await signChainHeads(signer, next, publicKeysById([signing.publicPem]));
    expect(round.rewound).toContainEqual({ chain: rotated, seq: 2, signedSeq: 3 });
    expect(round.signed).toBeGreaterThan(0);
    expect(await checkpointsOf(rotated)).toMatchObject([{ seq: 3, key_id: key.keyId }]);
    // A head that did not move is signed again under the new key.
    const other = `user:steady-${suffix()}`;
    await newChain(other);
    await signChainHeads(signer, key);
    await signChainHeads(signer, next, publicKeysById([signing.publicPem]));
    expect((await checkpointsOf(other)).map((c) => [c.seq, c.key_id])).toEqual([
      [1, key.keyId],
      [1, next.keyId],
    ]);
  });
});

describe('who signs (A2)', () => {
  it('the worker schedule signs only while its process leads', async () => {
    const follower = `user:follower-${suffix()}`;
    await newChain(follower);
    let asked = 0;
    const stopped = startCheckpointSchedule({
      db: signer,
      key,
      intervalMs: 50,
      leader: { isLeader: () => (asked++, false) },
      log: () => undefined,
    });
    await expect.poll(() => asked, { timeout: 60_000 }).toBeGreaterThanOrEqual(3);
    await stopped.stop();
    expect(await checkpointsOf(follower)).toEqual([]);
    const lines: string[] = [];
    const leading = startCheckpointSchedule({
      db: signer,
      key,
      intervalMs: 50,
      leader: { isLeader: () => true },
      log: (l) => lines.push(l),
    });
    await expect.poll(() => checkpointsOf(follower), { timeout: 60_000 }).toMatchObject([{ seq: 1 }]);
    await leading.stop();
    expect(lines.some((l) => l.includes(`key ${key.keyId}`))).toBe(true);
  });

  it('npm run audit:checkpoint signs, exports and prints the public key', async () => {
    const other = pair();
    const cliChain = `user:cli-${suffix()}`;
    await newChain(cliChain);
    const env = {
      DATABASE_URL: t.appUrl,
      AUDIT_SIGNER_DATABASE_URL: signerUrl,
      MIGRATION_DATABASE_URL: undefined,
      AUDIT_SIGNING_KEY: save('signing.pem', other.privatePem),
    };
    // Without the signer's connection nothing is signed: the app role may not store checkpoints.
    const unsigned = await script('scripts/audit-checkpoint.ts', [], { ...env, AUDIT_SIGNER_DATABASE_URL: undefined });
    expect(unsigned.code).toBe(2);
    expect(unsigned.output).toContain('AUDIT_SIGNER_DATABASE_URL');
    const signed = await script('scripts/audit-checkpoint.ts', [], env);
    expect(signed.output).toMatch(/signed \d+ chain heads/);
    expect(await checkpointsOf(cliChain)).toMatchObject([
      { seq: 1, key_id: loadCheckpointKey(other.privatePem).keyId },
    ]);
    const printed = await script('scripts/audit-checkpoint.ts', ['--public-key'], env);
    expect(printed.output).toBe(other.publicPem);
    const out = path.join(dir, 'cli-checkpoints.json');
    expect((await script('scripts/audit-checkpoint.ts', ['--export', out], env)).code).toBe(0);
    const refused = await script('scripts/audit-checkpoint.ts', [], {
      DATABASE_URL: t.appUrl,
      AUDIT_SIGNING_KEY: undefined,
    });
    expect(refused.code).toBe(2);
  });
});

describe('the public key download', () => {
  it('gives the PEM to anyone signed in, and nothing without a session', async () => {
    process.env.DATABASE_URL = t.appUrl;
    process.env.NEXTAUTH_SECRET = 'audit-checkpoint-test-secret';
    process.env.AUDIT_SIGNING_KEY = signing.privatePem;
    resetEnvCache();
    const { GET } = await import('@/app/api/console/audit/public-key/route.ts');
    const { insertUser } = await import('@/lib/auth/users.ts');
    const { mintSessionToken } = await import('@/lib/auth/session.ts');
    const system = { kind: 'system' as const, id: 'test', label: 'test setup' };
    const u = await insertUser(
      t.db,
      { email: `auditor-${randomUUID()}@example.com`, name: 'a', role: 'auditor', password: 'a-long-enough-password' },
      system,
    );
    const token = await mintSessionToken({ id: u.id, email: u.email, sessionVersion: u.sessionVersion });
    const url = 'http://localhost/api/console/audit/public-key';
    const ok = await GET(new Request(url, { headers: { cookie: `next-auth.session-token=${token}` } }), undefined);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-key-id')).toBe(key.keyId);
    expect(await ok.text()).toBe(signing.publicPem);
    const anonymous = await GET(new Request(url), undefined);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toContain('problem+json');
  });
});

describe('a planted checkpoint (A2)', () => {
  it('A2: a stored checkpoint whose signature does not verify neither calls its chain rewound nor stops the round; it is reported', async () => {
    const planted = `user:planted-${suffix()}`;
    await newChain(planted);
    await newChain(planted);
    // Planted as the owner (the trigger allows INSERT): above the head, and at the next seq under this key id.
    await t.owner(
      `INSERT INTO audit_checkpoint (chain, seq, hash, signed_at, key_id, signature)
       VALUES ($1, 9, repeat('a', 64), now(), $2, 'AAAA'), ($1, 3, repeat('b', 64), now(), 'feedfeedfeedfeed', 'AAAA')`,
      [planted, key.keyId],
    );
    const round = await signChainHeads(signer, key);
    expect(round.rewound.filter((r) => r.chain === planted)).toEqual([]);
    expect(round.untrusted.filter((u) => u.chain === planted).sort((a, b) => a.seq - b.seq)).toEqual([
      { chain: planted, seq: 3, keyId: 'feedfeedfeedfeed' },
      { chain: planted, seq: 9, keyId: key.keyId },
    ]);
    expect((await checkpointsOf(planted)).filter((c) => c.signature !== 'AAAA')).toMatchObject([
      { seq: 2, key_id: key.keyId },
    ]);
    // The chain moves on to seq 3: its head is signed, the planted seq 3 row (another key id) is ignored.
    await newChain(planted);
    const next = await signChainHeads(signer, key);
    expect(next.rewound.filter((r) => r.chain === planted)).toEqual([]);
    expect(next.untrusted).toContainEqual({ chain: planted, seq: 3, keyId: 'feedfeedfeedfeed' });
    expect((await checkpointsOf(planted)).filter((c) => c.signature !== 'AAAA').map((c) => c.seq)).toEqual([2, 3]);
  });
});
