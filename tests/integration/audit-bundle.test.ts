// A2, A5: the JSON Lines export as a signed bundle, downloaded from the console route. It is cut at the
// newest signed tree head and says what it covers (every entry, a filter, a person's scope) inside a
// signed statement; a bundle of every entry rebuilds the signed root, a filtered or scoped one carries
// each entry's inclusion proof. The verifier (SDK and npm run audit:verify) accepts each as downloaded
// and refuses a removed entry, a changed coverage, a flipped summary flag, a missing or wrong log key.
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendAudit } from '@/lib/audit/append.ts';
import { signTreeHead, type TreeSigner } from '@/lib/audit/tree/signer.ts';
import { integrateAll } from '@/lib/audit/tree/store.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { formatVkey, verifierFor } from '@/lib/sdk/audit/signed-note.ts';
import { verifyExport } from '@/lib/sdk/audit/verify-export.ts';
import { createSignerDb } from '../helpers/audit-signer.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, suffix, userActor } from '../helpers/factories.ts';

const ORIGIN = 'bundle.test/audit';
const dir = mkdtempSync(path.join(tmpdir(), 'audit-bundle-'));
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const signingPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const logKey = formatVkey(verifierFor(ORIGIN, publicKey));
const trust = { logKey };
const system = { kind: 'system' as const, id: 'test', label: 'test setup' };
const wf = { mine: `mine_${suffix()}`, theirs: `theirs_${suffix()}` };
const cookies = {} as Record<'scoped' | 'everywhere', string>;
let t: TestDatabase;
let treeSize = 0;
let theirRun: string;

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 8 });
  const signerDb = (await createSignerDb(t)).db;
  process.env.DATABASE_URL = t.appUrl;
  process.env.NEXTAUTH_SECRET = 'audit-bundle-secret';
  process.env.AUDIT_SIGNING_KEY = signingPem;
  process.env.AUDIT_TREE_ORIGIN = ORIGIN;
  resetEnvCache();
  const runs = { mine: (await makeRun(t.db, wf.mine)).runId, theirs: (await makeRun(t.db, wf.theirs)).runId };
  theirRun = runs.theirs;
  for (let i = 0; i < 6; i++)
    for (const [which, runId] of Object.entries(runs))
      await appendAudit(t.db, {
        chain: `run:${runId}`,
        actor: userActor('operator'),
        action: i % 2 ? 'replay.request' : 'run.replay_request',
        subjectType: 'run',
        subjectId: runId,
        runId,
        reason: `${which} ${i}`,
      });

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
  await integrateAll(t.db);
  const signer: TreeSigner = { privateKey, origin: ORIGIN, statePath: path.join(dir, 'log.tree-state') };
  const head = await signTreeHead(signerDb, signer);
  expect(head.kind).toBe('signed');
  treeSize = (head as { size: number }).size;
});

async function download(who: keyof typeof cookies, query = '') {
  const { GET } = await import('@/app/api/console/audit/export/route.ts');
  const headers = new Headers({ host: 'console.test', cookie: cookies[who] });
  const response = await GET(
    new Request(`http://console.test/api/console/audit/export?format=jsonl${query}`, { headers }),
    undefined as never,
  );
  expect(response.status).toBe(200);
  return (await response.text()).trimEnd().split('\n');
}

const text = (lines: string[]) => lines.join('\n') + '\n';
type Line = Record<string, unknown> & { export?: Record<string, unknown>; bundle?: Record<string, unknown> };
const parse = (line: string) => JSON.parse(line) as Line;

/** The Python reimplementation (tests/python/audit_bundle.py, standard library only) on a bundle. */
function python(lines: string[], name: string, key = logKey): { code: number | null; output: string } {
  const file = path.join(dir, `${name}.jsonl`);
  writeFileSync(file, text(lines));
  const py = spawnSync('python3', ['tests/python/audit_bundle.py', file, '--log-key', key], { encoding: 'utf8' });
  return { code: py.status, output: py.stdout.trim() + py.stderr.trim() };
}

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', 'audit:verify', '--', ...args], { env: process.env });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('A2, A5: the export as a signed bundle', () => {
  it('every entry: cut at the signed head, in leaf order, rebuilding its root; verified by the SDK and the CLI', async () => {
    const lines = await download('everywhere');
    const header = parse(lines[0]!).bundle!;
    expect(header).toMatchObject({ version: 3, coverage: { filter: null, workflows: null } });
    expect(lines.length).toBe(treeSize + 2);
    expect(lines.slice(1, -1).map((l) => (parse(l).leaf as { index: number }).index)).toEqual(
      Array.from({ length: treeSize }, (_, i) => i),
    );
    expect(verifyExport(text(lines), undefined, trust)).toMatchObject({
      ok: true,
      entries: treeSize,
      bundle: { treeSize, coverage: 'every entry' },
    });
    const file = path.join(dir, 'all.jsonl');
    writeFileSync(file, text(lines));
    const cli = await run([file, '--log-key', logKey]);
    expect(cli.output).toContain('signed bundle: cut at the tree head');
    expect(cli.code).toBe(0);
    // The Python verifier reads a bundle's entries too (hashes and links; the signatures are not its part).
    const py = spawnSync('python3', ['tests/python/audit_verify.py', file], { encoding: 'utf8' });
    expect(py.stdout.trim()).toBe(`OK ${treeSize}`);
    // And its signed statement, head, leaves and root (audit_bundle.py).
    expect(python(lines, 'all-py')).toEqual({ code: 0, output: `OK ${treeSize} ${treeSize} every entry` });

    // A middle entry removed (the summary's counts fixed to match): the signed root is not rebuilt.
    const middle = Math.floor(treeSize / 2);
    const removed = lines.filter((_, i) => i !== middle + 1);
    const summary = parse(removed.at(-1)!);
    summary.export!.entries = treeSize - 1;
    const victim = parse(lines[middle + 1]!);
    const chains = summary.export!.chains as Record<string, { entries: number }>;
    chains[victim.chain as string]!.entries--;
    removed[removed.length - 1] = JSON.stringify(summary);
    const cut = verifyExport(text(removed), undefined, trust);
    expect(cut).toMatchObject({ ok: false, problem: expect.stringMatching(/missing from a bundle of every entry/) });
    writeFileSync(path.join(dir, 'cut.jsonl'), text(removed));
    expect((await run([path.join(dir, 'cut.jsonl'), '--log-key', logKey])).code).toBe(1);
    expect(python(removed, 'cut-py')).toEqual({
      code: 1,
      output: expect.stringMatching(new RegExp(`^BROKEN ${middle + 2} leaves ${middle} to ${middle} are missing`)),
    });

    // The summary flag flipped to hide that: refused against the signed coverage.
    const flipped = [...lines];
    const s = parse(flipped.at(-1)!);
    s.export!.filtered = true;
    flipped[flipped.length - 1] = JSON.stringify(s);
    expect(verifyExport(text(flipped), undefined, trust)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/signed coverage is every entry/),
    });
    expect(python(flipped, 'flipped-py').output).toMatch(
      /^BROKEN \d+ the summary's filtered flag is not the signed coverage's/,
    );
    // The log's signature replaced by one over a statement with another tree size: refused.
    const resigned = [...lines];
    const r = parse(resigned.at(-1)!);
    r.export!.signature = Buffer.alloc(64, 7).toString('base64');
    resigned[resigned.length - 1] = JSON.stringify(r);
    expect(python(resigned, 'resigned-py').output).toMatch(/^BROKEN \d+ the signed statement does not verify/);
    // No log key, or another log's key: refused.
    expect(verifyExport(text(lines))).toMatchObject({
      ok: false,
      line: 1,
      problem: expect.stringMatching(/--log-key/),
    });
    const other = formatVkey(verifierFor(ORIGIN, generateKeyPairSync('ed25519').publicKey));
    expect(verifyExport(text(lines), undefined, { logKey: other })).toMatchObject({ ok: false, line: 1 });
    expect(python(lines, 'other-key-py', other)).toEqual({
      code: 1,
      output: expect.stringMatching(/^BROKEN 1 the bundle's tree head does not verify/),
    });
  });

  it('a filter: each entry with its inclusion proof; an entry removed or the coverage changed is refused', async () => {
    const lines = await download('everywhere', '&action=replay.request');
    expect(parse(lines[0]!).bundle!.coverage).toEqual({ filter: { action: 'replay.request' }, workflows: null });
    const entries = lines.slice(1, -1).map(parse);
    expect(entries.length).toBe(6);
    expect(entries.every((e) => (e.leaf as { proof: string[] }).proof.length > 0)).toBe(true);
    expect(verifyExport(text(lines), undefined, trust)).toMatchObject({ ok: true, entries: 6 });
    expect(python(lines, 'filter-py')).toEqual({
      code: 0,
      output: `OK 6 ${treeSize} the filter {"action":"replay.request"}`,
    });

    // The middle one of its chain's three (the summary's counts fixed to match; the filter allows gaps).
    const gone = entries[2]!;
    expect(entries.filter((e) => e.chain === gone.chain).indexOf(gone)).toBe(1);
    const removed = lines.filter((_, i) => i !== 3);
    const summary = parse(removed.at(-1)!);
    summary.export!.entries = 5;
    const chains = summary.export!.chains as Record<string, { entries: number }>;
    chains[gone.chain as string]!.entries--;
    removed[removed.length - 1] = JSON.stringify(summary);
    expect(verifyExport(text(removed), undefined, trust)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/entries_root is not the root of the entries the file holds/),
    });
    expect(python(removed, 'filter-cut-py').output).toMatch(/^BROKEN 7 entries_root is not the root of the entries/);

    const widened = [...lines];
    const header = parse(widened[0]!);
    header.bundle!.coverage = { filter: { action: 'replay' }, workflows: null };
    widened[0] = JSON.stringify(header);
    expect(verifyExport(text(widened), undefined, trust)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/signed statement does not verify/),
    });
    expect(python(widened, 'widened-py').output).toMatch(/^BROKEN 8 the signed statement does not verify/);

    // The signed filter narrowed in the header (action=replay, which also holds run.replay_request,
    // passed off as action=replay.request): the first entry outside the narrowed filter is named,
    // before the statement's signature fails at the end.
    const broad = await download('everywhere', '&action=replay');
    const narrowed = [...broad];
    const h = parse(narrowed[0]!);
    h.bundle!.coverage = { filter: { action: 'replay.request' }, workflows: null };
    narrowed[0] = JSON.stringify(h);
    const outside = broad.findIndex((l, i) => i > 0 && parse(l).action === 'run.replay_request') + 1;
    expect(verifyExport(text(narrowed), undefined, trust)).toMatchObject({
      ok: false,
      line: outside,
      problem: "the entry does not match the signed filter's action",
    });
    expect(python(narrowed, 'narrowed-py').output).toBe(
      `BROKEN ${outside} the entry does not match the signed filter's action`,
    );

    const proofChanged = [...lines];
    const e = parse(proofChanged[3]!);
    (e.leaf as { proof: string[] }).proof[0] = Buffer.alloc(32, 1).toString('base64');
    proofChanged[3] = JSON.stringify(e);
    expect(verifyExport(text(proofChanged), undefined, trust)).toMatchObject({
      ok: false,
      line: 4,
      problem: expect.stringMatching(/inclusion proof does not verify/),
    });
    expect(python(proofChanged, 'proof-py').output).toMatch(/^BROKEN 4 the entry is not leaf \d+ of the signed tree/);
  });

  it('Z1: a scoped person gets a bundle that names their workflows and holds nothing of the others', async () => {
    const lines = await download('scoped');
    expect(parse(lines[0]!).bundle!.coverage).toEqual({ filter: null, workflows: [wf.mine] });
    expect(text(lines)).not.toContain(theirRun);
    const result = verifyExport(text(lines), undefined, trust);
    expect(result).toMatchObject({ ok: true, bundle: { coverage: `the workflows ${wf.mine}` } });
    expect(result.ok && result.entries).toBeGreaterThanOrEqual(6);
    // The scope removed from the header, to pass the bundle off as the whole trail: refused.
    const unscoped = [...lines];
    const header = parse(unscoped[0]!);
    header.bundle!.coverage = { filter: null, workflows: null };
    unscoped[0] = JSON.stringify(header);
    expect(verifyExport(text(unscoped), undefined, trust)).toMatchObject({ ok: false });
    expect(python(lines, 'scoped-py').output).toMatch(new RegExp(`^OK \\d+ ${treeSize} the workflows ${wf.mine}$`));
    expect(python(unscoped, 'unscoped-py').output).toMatch(/^BROKEN \d+ /);
  });
});
