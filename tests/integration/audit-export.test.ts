// A2, A5: the audit export is evidence that holds outside the database. Entries written by the SQL
// functions (claims, transitions) and by the application, with details that stress RFC 8785 (member
// order by UTF-16 code units, escapes, doubles of every range), are exported as JSON Lines; the canonical text the
// database hashed equals the one rebuilt from each exported row; `npm run audit:verify` and an
// independent Python implementation (Debian's python3, standard library only) accept the export and
// name the same first broken entry of a tampered copy; a filtered export states its seq range.
import { spawn } from 'node:child_process';
import pg from 'pg';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendAudit } from '@/lib/audit/append.ts';
import { canonicalV1, canonicalV2, type ExportedEntry } from '@/lib/sdk/audit/canonical.ts';
import { verifyAuditTrail } from '@/lib/audit/verify.ts';
import { verifyExport } from '@/lib/sdk/audit/verify-export.ts';
import type { AuditFilter } from '@/lib/read-models/audit.ts';
import { auditExportStream, exportSummary, isFiltered, jsonLine } from '@/lib/read-models/audit-export.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect, userActor } from '../helpers/factories.ts';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';

let t: TestDatabase;
const dir = mkdtempSync(path.join(tmpdir(), 'audit-export-'));

const tricky = {
  z: 1,
  a: [1, 2.5, null, true, false, 0.1, 1e-7, 1e21, 2 ** 60, -0.000001, 123456789.125],
  // On a rounding interval's edge, past 2^53, subnormal, the largest: float8out alone misprints the first three.
  edges: [1e23, 4.75e21, 58978286867103860, 2 ** 53 + 2, 5e-324, 2.2250738585072014e-308, Number.MAX_VALUE],
  '': 'empty key',
  é: 'after a',
  '\u{1F600}': 'astral key (surrogates sort before U+E000)',
  '\uE000': 'private use',
  aa: { txt: 'quote " backslash \\ tab \t ctl \u0001 \u007f \u2028 </script>', empty: {}, list: [] },
  A: 'upper case sorts first',
};

async function exportJsonl(filter: AuditFilter = {}): Promise<string> {
  const summary = exportSummary(isFiltered(filter), EVERY_WORKFLOW);
  let out = '';
  for await (const e of auditExportStream(t.db, filter, EVERY_WORKFLOW)) {
    summary.add(e);
    out += jsonLine(e);
  }
  return out + summary.line();
}

function run(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: process.cwd(), env });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}
const save = (name: string, text: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
};
const rows = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ExportedEntry & { export?: unknown });

beforeAll(async () => {
  t = await createTestDatabase();
  for (const state of ['done', 'failed', 'unknown', 'pending'] as const) await makeEffect(t.db, state);
  const admin = userActor('admin');
  for (let i = 0; i < 5; i++)
    await appendAudit(t.db, {
      chain: 'user:evidence',
      actor: admin,
      action: 'user.create',
      subjectType: 'user',
      subjectId: 'evidence',
      reason: i === 2 ? 'a reason with "quotes", é and a line\nbreak' : null,
      detail: { ...tricky, i },
      request: { ip: '203.0.113.9', userAgent: 'Mozilla/5.0 (X11)', requestId: `req-${i}` },
    });
});

describe('A2, A5: the audit export as evidence', () => {
  it('A2: every new entry is canonical form 2, and the text the database hashed equals RFC 8785 rebuilt from the exported row', async () => {
    const text = await exportJsonl();
    const entries = rows(text).filter((r) => !r.export);
    expect(entries.length).toBeGreaterThan(10);
    const { rows: db } = await t.owner<{ id: string; v2: string; v1: string; version: number }>(
      'SELECT id::text, audit_canonical_v2(e) AS v2, audit_canonical_v1(e) AS v1, canon_version AS version FROM audit_entry e',
    );
    const byId = new Map(db.map((r) => [r.id, r]));
    for (const e of entries) {
      expect(e.version).toBe(2);
      expect(canonicalV2(e)).toBe(byId.get(e.id)!.v2);
      expect(canonicalV1(e)).toBe(byId.get(e.id)!.v1);
      expect(e.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    }
    const stressed = entries.find((e) => e.chain === 'user:evidence' && e.reason)!;
    expect(stressed).toMatchObject({ actor_kind: 'user', actor_role: 'admin', ip: '203.0.113.9', request_id: 'req-2' });
    expect(typeof stressed.actor_id).toBe('string');
    expect(canonicalV2(stressed)).toContain('"":"empty key","A":"upper case sorts first","a":');
    expect(canonicalV2(stressed).indexOf('\u{1F600}')).toBeLessThan(canonicalV2(stressed).indexOf('\uE000'));
    expect(await verifyAuditTrail(t.db)).toMatchObject({ ok: true });
  });

  it('A2: npm run audit:verify and the Python reimplementation accept the full export', async () => {
    const text = await exportJsonl();
    const n = rows(text).length - 1;
    expect(verifyExport(text)).toMatchObject({ ok: true, entries: n, partial: [] });
    const file = save('full.jsonl', text);
    const cli = await run('npm', ['run', '--silent', 'audit:verify', '--', file]);
    expect(cli.output).toContain(`OK: ${n} entries`);
    expect(cli.code).toBe(0);
    const py = await run('python3', ['tests/python/audit_verify.py', file]);
    expect(py.output.trim()).toBe(`OK ${n}`);
    expect(py.code).toBe(0);
  });

  it('A2: a tampered export: both verifiers exit non-zero and name the same first broken entry; a removed entry and a wrong summary are caught', async () => {
    const lines = (await exportJsonl()).trim().split('\n');
    const target = lines.findIndex((l) => l.includes('"req-3"'));
    const victim = JSON.parse(lines[target]!) as ExportedEntry;
    const tampered = [...lines];
    tampered[target] = JSON.stringify({ ...victim, reason: 'rewritten after the fact' });
    const file = save('tampered.jsonl', tampered.join('\n') + '\n');
    expect(verifyExport(tampered.join('\n'))).toMatchObject({
      ok: false,
      line: target + 1,
      id: victim.id,
      problem: 'content does not match its hash',
    });
    const cli = await run('npm', ['run', '--silent', 'audit:verify', '--', file]);
    expect(cli.code).toBe(1);
    expect(cli.output).toContain(`BROKEN at line ${target + 1}: entry ${victim.id} (chain user:evidence, seq 4)`);
    const py = await run('python3', ['tests/python/audit_verify.py', file]);
    expect(py.code).toBe(1);
    expect(py.output.trim()).toBe(`BROKEN ${target + 1} ${victim.id} content does not match its hash`);

    const removed = lines.filter((_, i) => i !== target);
    expect(verifyExport(removed.join('\n'))).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/gap|summary/),
    });
    // Both verifiers read the chains by seq: a removed entry inside a chain is a gap, and a chain's first
    // entries removed from an export neither filtered nor scoped are a break; each names the same entry.
    const chained = lines.map((l) => JSON.parse(l) as ExportedEntry & { export?: unknown });
    const gapAt = chained.findIndex((e) => e.chain === victim.chain && e.seq === victim.seq + 1);
    const headless = chained.findIndex((e) => e.chain === victim.chain && e.seq === 1);
    const secondOfChain = chained.findIndex((e) => e.chain === victim.chain && e.seq === 2);
    expect([gapAt, headless, secondOfChain].every((i) => i >= 0)).toBe(true);
    for (const [name, cut, brokenAt, problem, pyProblem] of [
      ['gap', target, gapAt, /sequence gap/, `sequence gap after seq ${victim.seq - 1}`],
      ['headless', headless, secondOfChain, /starts at seq 2/, 'the chain starts at seq 2'],
    ] as const) {
      const kept = lines.filter((_, i) => i !== cut);
      const line = brokenAt > cut ? brokenAt : brokenAt + 1; // its line once the cut line is gone
      expect(verifyExport(kept.join('\n')), name).toMatchObject({
        ok: false,
        line,
        problem: expect.stringMatching(problem),
      });
      const py = await run('python3', ['tests/python/audit_verify.py', save(`${name}.jsonl`, kept.join('\n') + '\n')]);
      expect(py.code, name).toBe(1);
      expect(py.output.trim(), name).toBe(`BROKEN ${line} ${chained[brokenAt]!.id} ${pyProblem}`);
    }
    const withoutSummary = lines.slice(0, -1);
    expect(verifyExport(withoutSummary.join('\n'))).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/truncated/),
    });
  });

  it('A5: a filtered export states the seq range it holds per chain and verifies as partial', async () => {
    const text = await exportJsonl({ action: 'user.create', from: undefined });
    const all = rows(text);
    const summary = all.at(-1)!.export as { filtered: boolean; chains: Record<string, unknown> };
    expect(summary.filtered).toBe(true);
    expect(summary.chains['user:evidence']).toEqual({ first_seq: 1, last_seq: 5, entries: 5 });
    const later = all.filter((r) => !r.export && r.seq >= 3);
    const cut =
      later.map((r) => JSON.stringify(r)).join('\n') +
      '\n' +
      JSON.stringify({
        export: {
          format: 'effect-ledger-audit',
          version: 2,
          filtered: true,
          entries: 3,
          chains: { 'user:evidence': { first_seq: 3, last_seq: 5, entries: 3 } },
        },
      });
    expect(verifyExport(cut)).toEqual({
      ok: true,
      entries: 3,
      chains: 1,
      partial: [{ chain: 'user:evidence', first_seq: 3, last_seq: 5 }],
    });
  });

  it('A2: an entry hashed before version 2 keeps canonical form 1 and its hash; its chain continues in form 2; both verify in the database and offline', async () => {
    // Written as the release before the audit_jcs migration did: form 1, triggers off (owner only).
    const client = new pg.Client({ connectionString: t.ownerUrl });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL session_replication_role = replica');
      // Form 1 as docs/AUDIT.md states it: every field, escapes, and a detail whose members jsonb
      // orders by UTF-8 length then bytes ("é" is two bytes) and whose numbers it prints plain.
      await client.query(
        `INSERT INTO audit_entry (chain, seq, prev_hash, hash, canon_version, at, actor_kind, actor_id, actor_label, actor_role,
                                  action, subject_type, subject_id, run_id, before_state, reason, outcome, detail, ip, user_agent, request_id)
         VALUES ('user:legacy', 1, repeat('0', 64), '', 1, now(), 'system', 'migration', 'earlier release', 'admin',
                 'user.create', 'user', 'legacy', gen_random_uuid(), 'pending', $1, 'ok', $2::jsonb, '203.0.113.7', 'curl/8', 'req-legacy')`,
        [
          'quote " backslash \\ line\nfeed \u0001 and \u{1F600}',
          JSON.stringify({
            note: 'é',
            n: 2,
            é: 0.30000000000000004,
            ab: [1.5, 1e-7, 1e21, -3, true, null, { zz: 'a"b\\c\n\t\u0001', y: {}, x: [] }],
            big: 12345678901234567000,
            '': 'empty',
          }),
        ],
      );
      await client.query(
        `UPDATE audit_entry e SET hash = audit_hash(e.prev_hash, audit_canonical_v1(e)) WHERE chain = 'user:legacy'`,
      );
      await client.query(
        `INSERT INTO audit_chain_head (chain, seq, hash) SELECT chain, seq, hash FROM audit_entry WHERE chain = 'user:legacy'`,
      );
      await client.query('COMMIT');
    } finally {
      await client.end();
    }
    await appendAudit(t.db, {
      chain: 'user:legacy',
      actor: userActor('admin'),
      action: 'user.create',
      subjectType: 'user',
      subjectId: 'legacy',
      detail: { after: 'migration' },
    });
    expect(await verifyAuditTrail(t.db)).toMatchObject({ ok: true });
    const text = await exportJsonl({ action: 'user.create' });
    const legacy = rows(text).filter((r) => r.chain === 'user:legacy');
    expect(legacy.map((r) => [r.seq, r.version])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    expect(legacy[1]!.prev_hash).toBe(legacy[0]!.hash);
    expect(verifyExport(text)).toMatchObject({ ok: true });
    expect(canonicalV1(legacy[0] as ExportedEntry)).toContain(
      '{"": "empty", "n": 2, "ab": [1.5, 0.0000001, 1000000000000000000000, -3, true, null, {"x": [], "y": {}, "zz":',
    );
    // The Python verifier implements form 1 from docs/AUDIT.md too (it refused every form 1 entry before).
    const py = await run('python3', ['tests/python/audit_verify.py', save('legacy.jsonl', text)]);
    expect(py.output.trim()).toBe(`OK ${rows(text).length - 1}`);
    expect(py.code).toBe(0);
    const changed = text.replace(JSON.stringify(legacy[0]), JSON.stringify({ ...legacy[0], ip: '203.0.113.8' }));
    const pyChanged = await run('python3', ['tests/python/audit_verify.py', save('legacy-changed.jsonl', changed)]);
    expect(pyChanged.output.trim()).toMatch(
      new RegExp(`^BROKEN \\d+ ${legacy[0]!.id} content does not match its hash$`),
    );
    // Relabelling the old entry as form 2 does not pass: its hash covers form 1.
    const relabelled = text.replace(JSON.stringify(legacy[0]), JSON.stringify({ ...legacy[0], version: 2 }));
    expect(verifyExport(relabelled)).toMatchObject({
      ok: false,
      id: legacy[0]!.id,
      problem: 'content does not match its hash',
    });
  });

  it('A2: npm run audit:verify in database mode exits 0 on a whole trail, 1 on a broken one, 2 on a usage error', async () => {
    const env = { ...process.env, DATABASE_URL: t.appUrl };
    const whole = await run('npm', ['run', '--silent', 'audit:verify'], env);
    expect(whole.output).toContain('[audit:verify] ok');
    expect(whole.code).toBe(0);
    await t.owner(`
      ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_no_update;
      UPDATE audit_entry SET reason = 'rewritten in place' WHERE chain = 'user:evidence' AND seq = 2;
      ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_no_update;`);
    const broken = await run('npm', ['run', '--silent', 'audit:verify'], env);
    expect(broken.output).toContain('BROKEN: chain user:evidence, seq 2');
    expect(broken.code).toBe(1);
    const usage = await run('npm', ['run', '--silent', 'audit:verify', '--', '--no-such-option'], env);
    expect(usage.output).toContain('usage:');
    expect(usage.code).toBe(2);
  }, 60_000);
});
