// A2: one signed tree over the whole audit trail (docs/AUDIT.md). The sequencer integrates committed
// entries, the API serves heads and RFC 9162 proofs that verify offline, the signer refuses a head that
// does not extend its state file's, and two witnesses refuse to cosign a history the owner rewrote
// (triggers disabled, chain rehashed, tree tables rebuilt, a head forged with the log's own key), so a
// verifier that requires their quorum refuses it.
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendAudit } from '@/lib/audit/append.ts';
import { signTreeHead, type TreeSigner } from '@/lib/audit/tree/signer.ts';
import { integrateAll, rootAt } from '@/lib/audit/tree/store.ts';
import { witnessOnce, type WitnessConfig } from '@/lib/audit/tree/witness.ts';
import { auditLeafHash, TreeBuilder, verifyConsistency, verifyInclusion } from '@/lib/sdk/audit/merkle.ts';
import {
  checkpointBody,
  cosign,
  formatNote,
  formatVkey,
  mergeNotes,
  openTreeHead,
  verifierFor,
} from '@/lib/sdk/audit/signed-note.ts';
import { verifyTreeEvidence } from '@/lib/sdk/audit/tree-verify.ts';
import { metrics } from '@/lib/ops/metrics.ts';
import type { Db } from '@/lib/db/client.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { createSignerDb } from '../helpers/audit-signer.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { BASE, get, makeKey, routeFetch, useApiDb } from './api-support.ts';

const ORIGIN = 'ledger.test/audit';
const dir = mkdtempSync(path.join(tmpdir(), 'audit-tree-'));
const logKey = generateKeyPairSync('ed25519');
const signer: TreeSigner = {
  privateKey: logKey.privateKey,
  origin: ORIGIN,
  statePath: path.join(dir, 'log.tree-state'),
};
const logV = verifierFor(ORIGIN, logKey.publicKey);
let t: TestDatabase;
let token: string;
let signerDb: Db;
let secondSize = 0;

const system = { kind: 'system', id: 'tree-test', label: 'tree test' } as const;
const append = (chain: string, n: number) =>
  Promise.all(
    Array.from({ length: n }, (_, i) =>
      appendAudit(t.db, { chain, actor: system, action: 'audit.checkpoint', subjectType: 'audit', subjectId: `x${i}` }),
    ),
  );

function witness(name: string): WitnessConfig {
  const key = generateKeyPairSync('ed25519');
  const file = path.join(dir, `${name.replace(/\W/g, '-')}.state`);
  return { name, privateKey: key.privateKey, statePath: file, log: logV, baseUrl: BASE, token, fetch: routeFetch };
}

beforeAll(async () => {
  t = await createTestDatabase();
  signerDb = (await createSignerDb(t)).db;
  useApiDb(t.db);
  token = (await makeKey(t.db)).token;
});

describe('A2: the audit tree', () => {
  it('holds every committed entry once, in leaf order, with a root an auditor recomputes from the entries; proofs from the API verify; the app role cannot write the tree', async () => {
    await append('user:tree-a', 12);
    await append('user:tree-b', 9);
    const size = await integrateAll(t.db);
    const rows = await t.owner<{ hash: string }>(
      'SELECT e.hash FROM audit_tree_leaf l JOIN audit_entry e ON e.id = l.entry_id ORDER BY l.idx',
    );
    const pending = await t.owner('SELECT 1 FROM audit_tree_pending');
    const entries = await t.owner('SELECT 1 FROM audit_entry');
    expect(rows.rowCount).toBe(size);
    expect(size).toBe(entries.rowCount);
    expect(pending.rowCount).toBe(0);
    const builder = new TreeBuilder();
    rows.rows.forEach((r) => builder.add(auditLeafHash(r.hash)));
    const root = await rootAt(t.db, size);
    expect(builder.root().equals(root)).toBe(true);

    const [entry] = (
      await t.owner<{ id: string }>("SELECT id FROM audit_entry WHERE chain = 'user:tree-b' ORDER BY seq LIMIT 1")
    ).rows;
    const inc = (await (await get(`/audit/tree/inclusion/${size}/${entry!.id}`, token)).json()) as {
      leaf_index: number;
      entry_hash: string;
      proof: string[];
    };
    const proof = inc.proof.map((p) => Buffer.from(p, 'base64'));
    expect(verifyInclusion(inc.leaf_index, size, auditLeafHash(inc.entry_hash), proof, root)).toBe(true);
    const cons = (await (await get(`/audit/tree/consistency/5/${size}`, token)).json()) as { proof: string[] };
    const root5 = await rootAt(t.db, 5);
    expect(
      verifyConsistency(
        5,
        size,
        root5,
        root,
        cons.proof.map((p) => Buffer.from(p, 'base64')),
      ),
    ).toBe(true);

    // Bad input: a clear 4xx naming the problem.
    expect((await get(`/audit/tree/consistency/${size}/5`, token)).status).toBe(422);
    expect((await get(`/audit/tree/consistency/1/${size + 100}`, token)).status).toBe(422);
    const bad = await get(`/audit/tree/inclusion/abc/${entry!.id}`, token);
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { field?: string }).field).toBe('size');
    expect((await get(`/audit/tree/inclusion/${size}/999999999`, token)).status).toBe(404);
    expect((await get('/audit/tree/head', token)).status).toBe(404);
    expect((await get('/audit/tree/head')).status).toBe(401);

    for (const sql of [
      'UPDATE audit_tree_leaf SET hash = hash',
      'DELETE FROM audit_tree_node',
      "INSERT INTO audit_tree_leaf VALUES (999999, 999999, '\\x00')",
      'INSERT INTO audit_tree_pending VALUES (1)',
      // The signer's connection alone stores signed heads: a planted head would reach every reader.
      "INSERT INTO audit_tree_head (size, root, note) VALUES (1, '\\x00', 'planted')",
    ])
      await expect(t.db.$executeRawUnsafe(sql), sql).rejects.toThrow(/permission denied/);
  });

  const w1 = () => witness('witness.test/one');
  let one: WitnessConfig;
  let two: WitnessConfig;

  it('the signer signs heads that extend its last; two witnesses check consistency and cosign; a quorum of both verifies', async () => {
    one = w1();
    two = witness('witness.test/two');
    // The ledger takes cosignatures from witness one only (AUDIT_WITNESS_KEYS).
    process.env.AUDIT_SIGNING_KEY = logKey.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    process.env.AUDIT_TREE_ORIGIN = ORIGIN;
    process.env.AUDIT_TREE_STATE = signer.statePath;
    process.env.AUDIT_WITNESS_KEYS = formatVkey(verifierFor(one.name, one.privateKey));
    resetEnvCache();
    const first = await signTreeHead(signerDb, signer);
    expect(first.kind).toBe('signed');
    expect((await witnessOnce(one)).kind).toBe('cosigned');
    await append('user:tree-c', 7);
    await integrateAll(t.db);
    const second = await signTreeHead(signerDb, signer);
    expect(second.kind).toBe('signed');
    // Its own audit entry alone does not call for another head.
    await integrateAll(t.db);
    expect((await signTreeHead(signerDb, signer)).kind).toBe('unchanged');
    const a = await witnessOnce(one);
    const b = await witnessOnce(two);
    expect(a).toMatchObject({ kind: 'cosigned', submitted: true });
    expect(b).toMatchObject({ kind: 'cosigned', submitted: expect.stringMatching(/^403 .*configured/) });
    // The head the API serves carries witness one's stored cosignature (and not two's).
    const served = (await (await get('/audit/tree/head', token)).json()) as { note: string };
    expect(
      openTreeHead(served.note, { log: logV, witnesses: [verifierFor(one.name, one.privateKey)], quorum: 1 }),
    ).toMatchObject({ witnesses: [{ name: one.name }] });
    expect(served.note).not.toContain(two.name);
    const audited = await t.owner(
      "SELECT detail FROM audit_entry WHERE action = 'audit.tree_cosign' AND outcome = 'ok' ORDER BY id",
    );
    expect(audited.rows.map((r) => r.detail.witnesses)).toContainEqual([one.name]);
    // Bad submissions: a clear 4xx naming the note, nothing stored.
    const count = async () => (await t.owner('SELECT count(*)::int AS n FROM audit_tree_cosignature')).rows[0]!.n;
    const before = await count();
    const submit = (note: string, auth: string | null = token) =>
      routeFetch(`${BASE}/api/v1/audit/tree/cosignature`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(auth && { authorization: `Bearer ${auth}` }) },
        body: JSON.stringify({ note }),
      });
    const garbage = await submit('not a note');
    expect(garbage.status).toBe(422);
    expect(((await garbage.json()) as { field?: string }).field).toBe('note');
    const own = (a as { note: string }).note
      .split('\n')
      .filter((l) => !l.startsWith(`\u2014 ${ORIGIN} `))
      .join('\n');
    const flipped = own.replace(
      /(\u2014 witness\.test\/one \S{20})(\S)/,
      (_, p: string, c: string) => p + (c === 'A' ? 'B' : 'A'),
    );
    expect((await submit(flipped)).status).toBe(422);
    expect((await submit(own, null)).status).toBe(401);
    expect(await count()).toBe(before);
    const both = mergeNotes([(a as { note: string }).note, (b as { note: string }).note]);
    const trust = {
      log: logV,
      witnesses: [verifierFor(one.name, one.privateKey), verifierFor(two.name, two.privateKey)],
    };
    expect(openTreeHead(both, { ...trust, quorum: 2 }).size).toBe((second as { size: number }).size);
    // The files an auditor keeps: the cosigned heads, an entry's inclusion proof, the older head.
    const size = (second as { size: number }).size;
    const [entry] = (await t.owner<{ id: string }>("SELECT id FROM audit_entry WHERE chain = 'user:tree-c' LIMIT 1"))
      .rows;
    writeFileSync(
      path.join(dir, 'inclusion.json'),
      await (await get(`/audit/tree/inclusion/${size}/${entry!.id}`, token)).text(),
    );
    writeFileSync(
      path.join(dir, 'consistency.json'),
      await (await get(`/audit/tree/consistency/${(first as { size: number }).size}/${size}`, token)).text(),
    );
    writeFileSync(path.join(dir, 'first.note'), (first as { note: string }).note);
    writeFileSync(path.join(dir, 'w1.note'), (a as { note: string }).note);
    writeFileSync(path.join(dir, 'w2.note'), (b as { note: string }).note);
    secondSize = size;
  });

  it('after the owner rewrites a chain and rebuilds the tree, the signer refuses (log, metric, audit entry), no witness cosigns a head forged with the log key, and a quorum verifier refuses it', async () => {
    await t.owner(`
      ALTER TABLE audit_entry DISABLE TRIGGER USER;
      DO $$ DECLARE r record; prev text := repeat('0', 64); h text; BEGIN
        FOR r IN SELECT id, seq FROM audit_entry WHERE chain = 'user:tree-a' ORDER BY seq LOOP
          UPDATE audit_entry SET prev_hash = prev, reason = CASE WHEN r.seq = 2 THEN 'rewritten' ELSE reason END WHERE id = r.id;
          SELECT audit_hash(prev, audit_canonical(e)) INTO h FROM audit_entry e WHERE e.id = r.id;
          UPDATE audit_entry SET hash = h WHERE id = r.id;
          prev := h;
        END LOOP;
        UPDATE audit_chain_head SET hash = prev WHERE chain = 'user:tree-a';
      END $$;
      ALTER TABLE audit_entry ENABLE TRIGGER USER;
      ALTER TABLE audit_tree_leaf DISABLE TRIGGER USER; ALTER TABLE audit_tree_node DISABLE TRIGGER USER;
      ALTER TABLE audit_tree_head DISABLE TRIGGER USER;
      DELETE FROM audit_tree_leaf; DELETE FROM audit_tree_node; DELETE FROM audit_tree_head;
      ALTER TABLE audit_tree_leaf ENABLE TRIGGER USER; ALTER TABLE audit_tree_node ENABLE TRIGGER USER;
      ALTER TABLE audit_tree_head ENABLE TRIGGER USER;
      INSERT INTO audit_tree_pending SELECT id FROM audit_entry ON CONFLICT DO NOTHING;`);
    await append('user:tree-d', 3);
    const size = await integrateAll(t.db);
    const refusals = async () => (await metrics().auditTreeRefusals.get()).values[0]?.value ?? 0;
    const before = await refusals();
    const lines: string[] = [];
    const refused = await signTreeHead(signerDb, signer, { log: (l) => lines.push(l) });
    expect(refused).toMatchObject({ kind: 'refused' });
    expect(lines.join('\n')).toMatch(/REFUSED to sign: the tree of \d+ leaves does not extend/);
    expect(await refusals()).toBe(before + 1);
    const audited = await t.owner(
      "SELECT 1 FROM audit_entry WHERE chain = 'refused:audit:tree' AND action = 'audit.tree_head'",
    );
    expect(audited.rowCount).toBe(1);

    // The owner holds the log's key too and publishes a head of the rewritten tree.
    const root = await rootAt(t.db, size);
    const body = checkpointBody({ origin: ORIGIN, size, root });
    const forged = formatNote({
      body,
      signatures: [cosign(body, Math.floor(Date.now() / 1000), ORIGIN, logKey.privateKey)],
    });
    await t.owner('INSERT INTO audit_tree_head (size, root, note) VALUES ($1, $2, $3)', [size, root, forged]);
    for (const w of [one, two]) {
      const r = await witnessOnce(w);
      expect(r.kind, w.name).toBe('refused');
      expect((r as { problem: string }).problem).toMatch(/does not extend|another root/);
    }
    const trust = {
      log: logV,
      witnesses: [verifierFor(one.name, one.privateKey), verifierFor(two.name, two.privateKey)],
    };
    expect(() => openTreeHead(forged, { ...trust, quorum: 2 })).toThrow(/0 of the known witnesses cosigned/);
    const keys = { logKey: formatVkey(logV), witnessKeys: trust.witnesses.map(formatVkey), quorum: 2 };
    expect(verifyTreeEvidence({ heads: [forged], ...keys })).toMatchObject({ ok: false });

    // The command line, offline: the cosigned head with an inclusion proof and the consistency from
    // the first head verifies; the forged head does not.
    writeFileSync(path.join(dir, 'forged.note'), forged);
    // Proofs from the API for every leaf and every older size, with the roots they are against.
    const b64 = (h: Buffer) => h.toString('base64');
    const roots = await Promise.all(Array.from({ length: size + 1 }, (_, m) => rootAt(t.db, m).then(b64)));
    const leafIds = await t.owner<{ entry_id: string }>('SELECT entry_id::text FROM audit_tree_leaf ORDER BY idx');
    const proofsFile = { inclusion: [] as Record<string, unknown>[], consistency: [] as Record<string, unknown>[] };
    for (const { entry_id } of leafIds.rows) {
      const answer = (await (await get(`/audit/tree/inclusion/${size}/${entry_id}`, token)).json()) as object;
      proofsFile.inclusion.push({ ...answer, root: roots[size] });
    }
    for (let m = 0; m <= size; m++) {
      const answer = (await (await get(`/audit/tree/consistency/${m}/${size}`, token)).json()) as { proof: string[] };
      proofsFile.consistency.push({ ...answer, from_root: roots[m], to_root: roots[size] });
    }
    writeFileSync(path.join(dir, 'proofs.json'), JSON.stringify(proofsFile));
    const cli = (...heads: string[]) =>
      spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          'scripts/audit-tree-verify.ts',
          ...heads.flatMap((h) => ['--head', path.join(dir, h)]),
          '--log-key',
          keys.logKey,
          ...keys.witnessKeys.flatMap((k) => ['--witness-key', k]),
          '--quorum',
          '2',
          '--inclusion',
          path.join(dir, 'inclusion.json'),
          '--since',
          path.join(dir, 'first.note'),
          '--consistency',
          path.join(dir, 'consistency.json'),
        ],
        { encoding: 'utf8' },
      );
    const good = cli('w1.note', 'w2.note');
    expect(good.stdout + good.stderr).toMatch(
      /^OK: head of \d+ leaves signed by ledger\.test\/audit, cosigned by witness/,
    );
    expect(good.status).toBe(0);
    const bad = cli('forged.note');
    expect(bad.stderr).toMatch(/BROKEN: 0 of the known witnesses cosigned this head, 2 are required/);
    expect(bad.status).toBe(1);

    // The Python reimplementation (standard library, its own Ed25519) reaches the same verdicts.
    const evidence = (...heads: string[]) => [
      ...heads.flatMap((h) => ['--head', path.join(dir, h)]),
      '--log-key',
      keys.logKey,
      ...keys.witnessKeys.flatMap((k) => ['--witness-key', k]),
      '--quorum',
      '2',
      '--inclusion',
      path.join(dir, 'inclusion.json'),
      '--since',
      path.join(dir, 'first.note'),
      '--consistency',
      path.join(dir, 'consistency.json'),
    ];
    const python = (args: string[]) =>
      spawnSync('python3', ['tests/python/audit_tree.py', ...args], { encoding: 'utf8' });
    const pyGood = python(evidence('w1.note', 'w2.note'));
    expect(pyGood.stdout.trim()).toBe(`OK ${secondSize} witness.test/one,witness.test/two 1`);
    expect(pyGood.status).toBe(0);
    const pyForged = python(evidence('forged.note'));
    expect(pyForged.stdout.trim()).toBe('BROKEN 0 of the known witnesses cosigned this head, 2 are required');
    expect(pyForged.status).toBe(1);
    // A changed signed size, a changed proof hash: refused.
    const w1Note = readFileSync(path.join(dir, 'w1.note'), 'utf8');
    writeFileSync(path.join(dir, 'resized.note'), w1Note.replace(`\n${secondSize}\n`, `\n${secondSize + 1}\n`));
    expect(python(evidence('resized.note')).stdout).toMatch(
      /^BROKEN the signature of ledger\.test\/audit does not verify/,
    );
    const inclusion = JSON.parse(readFileSync(path.join(dir, 'inclusion.json'), 'utf8')) as { proof: string[] };
    inclusion.proof[0] = Buffer.alloc(32, 7).toString('base64');
    writeFileSync(path.join(dir, 'inclusion.json'), JSON.stringify(inclusion));
    expect(python(evidence('w1.note', 'w2.note')).stdout).toMatch(/^BROKEN entry \d+ is not in the signed tree/);
    // Every proof the API gives for the rewritten tree, against the roots of each size.
    expect(python(['--proofs', path.join(dir, 'proofs.json')]).stdout.trim()).toBe(
      `OK ${proofsFile.inclusion.length} ${proofsFile.consistency.length}`,
    );
    const wrong = structuredClone(proofsFile);
    (wrong.consistency[1] as { proof: string[] }).proof.reverse();
    writeFileSync(path.join(dir, 'wrong-proofs.json'), JSON.stringify(wrong));
    expect(python(['--proofs', path.join(dir, 'wrong-proofs.json')]).stdout).toMatch(/^BROKEN consistency/);
  });
});
