// prisma/sql/functions holds the current definition of every SQL function the migrations create, and
// migrate:new writes a changed or new file into the next migration.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { draftMigration } from '@/lib/db/migration-draft.ts';
import {
  compareFunctionFiles,
  describeDifferences,
  fileNameFor,
  FUNCTIONS_DIR,
  readFunctionFiles,
  type FunctionReport,
} from '@/lib/db/sql-functions.ts';

const scratchDirs: string[] = [];
afterAll(() => scratchDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function compare(t: TestDatabase, dir: string): Promise<FunctionReport> {
  const client = new pg.Client({ connectionString: t.ownerUrl });
  await client.connect();
  try {
    return await compareFunctionFiles(client, readFunctionFiles(dir));
  } finally {
    await client.end();
  }
}

/** A copy of the functions folder to edit. */
function functionsCopy(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ledger-functions-'));
  scratchDirs.push(dir);
  cpSync(FUNCTIONS_DIR, dir, { recursive: true });
  return dir;
}

function edit(dir: string, file: string, from: string, to: string): void {
  const text = readFileSync(path.join(dir, file), 'utf8');
  expect(text).toContain(from);
  writeFileSync(
    path.join(dir, file),
    text.replace(from, () => to),
  );
}

// What the migrations created in public, read straight from the catalog (not through the code under test).
const OUR_FUNCTIONS = `
  SELECT p.oid::regprocedure::text AS identity, p.proname AS name, p.prosrc AS body,
         count(*) OVER (PARTITION BY p.proname) > 1 AS overloaded
    FROM pg_proc p
   WHERE p.pronamespace = 'public'::regnamespace AND p.prokind IN ('f', 'p')
     AND NOT EXISTS (SELECT 1 FROM pg_depend d
                      WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
   ORDER BY 1`;

describe('SQL functions: prisma/sql/functions holds the current definitions', () => {
  it('every function the migrations created has exactly one file, which defines it exactly as the database has it', async () => {
    const t = await createTestDatabase();
    const report = await compare(t, FUNCTIONS_DIR);
    const drift = [
      ...report.problems,
      ...report.misnamed,
      ...report.unfiled.map((identity) => `${identity}: no file in prisma/sql/functions defines it`),
      ...report.verdicts
        .filter((v) => v.status === 'new')
        .map((v) => `${v.file}: defines ${v.identity}, a function the migrations do not create`),
      ...report.verdicts
        .filter((v) => v.status === 'changed')
        .map(
          (v) => `${v.identity}: ${v.file} differs from the migrated database: ${describeDifferences(v.differences)}`,
        ),
    ];
    expect(drift).toEqual([]);
    const { rows } = await t.owner<{ identity: string }>(OUR_FUNCTIONS);
    expect(report.verdicts.map((v) => v.identity).sort()).toEqual(rows.map((r) => r.identity).sort());
    expect(rows.length).toBeGreaterThanOrEqual(14);
  });

  it("each function's body (prosrc) is its file's dollar-quoted body, byte for byte", async () => {
    const t = await createTestDatabase();
    const { rows } = await t.owner<{ identity: string; name: string; body: string; overloaded: boolean }>(
      OUR_FUNCTIONS,
    );
    const files = new Map(readFunctionFiles().map((f) => [f.file, f.sql]));
    const mismatched = rows.flatMap((fn) => {
      const file = fileNameFor(fn, fn.overloaded);
      const sql = files.get(file);
      if (sql === undefined) return [`${fn.identity}: ${file} is missing`];
      const body = /\$(\w*)\$([\s\S]*?)\$\1\$/.exec(sql)?.[2];
      return body === fn.body ? [] : [`${fn.identity}: the body in ${file} is not the database's prosrc`];
    });
    expect(mismatched).toEqual([]);
  });

  it('names the function that differs and how: volatility, body, a second file, a missing file, a stray statement', async () => {
    const t = await createTestDatabase();
    const dir = functionsCopy();
    edit(dir, 'audit_hash.sql', 'LANGUAGE sql STABLE PARALLEL SAFE', 'LANGUAGE sql IMMUTABLE PARALLEL SAFE');
    edit(dir, 'ledger_idempotency_key.sql', "'el1-'", "'el2-'");
    cpSync(path.join(dir, 'plan_refuse_when_frozen.sql'), path.join(dir, 'plan_refuse_copy.sql'));
    rmSync(path.join(dir, 'audit_refuse_change.sql'));
    edit(dir, 'audit_verify.sql', '$$;\n', '$$;\nGRANT EXECUTE ON FUNCTION audit_verify() TO PUBLIC;\n');
    const report = await compare(t, dir);

    const changed = Object.fromEntries(
      report.verdicts.filter((v) => v.status === 'changed').map((v) => [v.identity, v.differences]),
    );
    expect(changed).toEqual({
      'audit_hash(text,text)': [{ what: 'volatility', database: '"STABLE"', file: '"IMMUTABLE"' }],
      'ledger_idempotency_key(text,integer)': [
        {
          what: 'body',
          database: expect.stringContaining("line 2: \"  SELECT 'el1-'"),
          file: expect.stringContaining("line 2: \"  SELECT 'el2-'"),
        },
      ],
    });
    expect(report.unfiled).toEqual(['audit_refuse_change()', 'audit_verify()']);
    expect(report.problems).toEqual([
      'audit_verify.sql: cannot insert multiple commands into a prepared statement',
      'plan_refuse_when_frozen.sql: defines plan_refuse_when_frozen(), which plan_refuse_copy.sql defines too',
    ]);
    expect(report.misnamed).toEqual([
      'plan_refuse_copy.sql: defines plan_refuse_when_frozen(), so it should be named plan_refuse_when_frozen.sql',
    ]);
    // Nothing was kept: the database still runs the migrations' definitions.
    expect((await compare(t, FUNCTIONS_DIR)).verdicts.every((v) => v.status === 'unchanged')).toBe(true);
  });
});

describe('migrate:new: function files that differ from the migrated database go into the new migration', () => {
  it('writes nothing when schema.prisma and every function file match the migrations', async () => {
    const t = await createTestDatabase();
    const draft = await draftMigration(t.ownerUrl);
    expect(draft.report.problems).toEqual([]);
    expect(draft.sql).toBe('');
  });

  it('writes a changed file as its CREATE OR REPLACE and a new file as its CREATE, after the schema diff', async () => {
    const t = await createTestDatabase();
    const dir = functionsCopy();
    edit(dir, 'ledger_idempotency_key.sql', "'el1-'", "'el2-'");
    // A new SQL function that calls another new one: it can only be created after it.
    writeFileSync(
      path.join(dir, 'audit_a_outer.sql'),
      'CREATE OR REPLACE FUNCTION audit_a_outer() RETURNS integer\nLANGUAGE sql AS $$ SELECT audit_z_inner() + 1 $$;\n',
    );
    writeFileSync(
      path.join(dir, 'audit_z_inner.sql'),
      '-- Why it exists.\nCREATE OR REPLACE FUNCTION audit_z_inner() RETURNS integer\nLANGUAGE sql AS $$ SELECT 41 $$;\n',
    );
    // The database lacks an index schema.prisma declares: the same diff as a schema.prisma that gains one.
    await t.owner('DROP INDEX replay_item_key_idx');

    const draft = await draftMigration(t.ownerUrl, dir);
    expect(draft.report.problems).toEqual([]);
    expect(draft.functions.map((v) => [v.file, v.status])).toEqual([
      ['audit_z_inner.sql', 'new'],
      ['ledger_idempotency_key.sql', 'changed'],
      ['audit_a_outer.sql', 'new'],
    ]);
    const sql = draft.sql;
    const at = (text: string) => {
      expect(sql).toContain(text);
      return sql.indexOf(text);
    };
    const index = at('CREATE INDEX "replay_item_key_idx"');
    const changed = at(readFileSync(path.join(dir, 'ledger_idempotency_key.sql'), 'utf8').trimEnd());
    const inner = at(readFileSync(path.join(dir, 'audit_z_inner.sql'), 'utf8').trimEnd());
    const outer = at(readFileSync(path.join(dir, 'audit_a_outer.sql'), 'utf8').trimEnd());
    expect(index).toBeLessThan(Math.min(changed, inner));
    expect(inner).toBeLessThan(outer);
    expect(sql).not.toContain('FUNCTION audit_hash');

    // The draft, applied as a migration would be, leaves nothing more to write.
    await t.owner(sql);
    expect((await t.owner<{ key: string }>("SELECT ledger_idempotency_key('k', 1) AS key")).rows[0]!.key).toMatch(
      /^el2-/,
    );
    const again = await draftMigration(t.ownerUrl, dir);
    expect(again.report.problems).toEqual([]);
    expect(again.sql).toBe('');
  });
});
