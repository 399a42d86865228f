// The current definition of every SQL function the migrations create lives in prisma/sql/functions,
// one CREATE OR REPLACE statement per file. Migrations stay append-only history; the files are what
// a change starts from. A file is compared with the database by running it inside a transaction
// that is always rolled back and reading back what PostgreSQL stored: the catalog, not a parse of
// the file's header, decides which function a file defines and whether anything differs.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';

export const FUNCTIONS_DIR = path.resolve('prisma/sql/functions');

export interface FunctionFile {
  /** The file's name inside the functions folder. */
  file: string;
  sql: string;
}

export function readFunctionFiles(dir = FUNCTIONS_DIR): FunctionFile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((file) => ({ file, sql: readFileSync(path.join(dir, file), 'utf8') }));
}

/** Everything CREATE OR REPLACE FUNCTION sets, as the catalog holds it. */
export interface FunctionShape {
  /** Name and argument types, as PostgreSQL prints them (what DROP FUNCTION takes). */
  identity: string;
  name: string;
  kind: string;
  arguments: string;
  result: string;
  language: string;
  volatility: string;
  parallel: string;
  securityDefiner: boolean;
  strict: boolean;
  leakproof: boolean;
  cost: number;
  rows: number;
  settings: string[] | null;
  /** prosrc, compared byte for byte. */
  body: string;
  /** pg_get_functiondef: catches any attribute not listed above. */
  definition: string;
  /** The catalog row's xmin: it changes when a statement rewrites the row, even to the same values. */
  version: string;
}

// Functions in public that an extension installed (pg_depend 'e') are the extension's, not ours;
// pg-boss keeps its own schema. Aggregates are not created by CREATE FUNCTION.
const FUNCTIONS_QUERY = `
  SELECT p.oid::regprocedure::text AS identity, p.proname AS name,
         CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END AS kind,
         pg_get_function_arguments(p.oid) AS arguments, coalesce(pg_get_function_result(p.oid), '') AS result,
         l.lanname AS language,
         CASE p.provolatile WHEN 'i' THEN 'IMMUTABLE' WHEN 's' THEN 'STABLE' ELSE 'VOLATILE' END AS volatility,
         CASE p.proparallel WHEN 's' THEN 'SAFE' WHEN 'r' THEN 'RESTRICTED' ELSE 'UNSAFE' END AS parallel,
         p.prosecdef AS "securityDefiner", p.proisstrict AS strict, p.proleakproof AS leakproof,
         p.procost::float8 AS cost, p.prorows::float8 AS rows, p.proconfig AS settings,
         p.prosrc AS body, pg_get_functiondef(p.oid) AS definition, p.xmin::text AS version
    FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
   WHERE p.pronamespace = 'public'::regnamespace AND p.prokind IN ('f', 'p')
     AND NOT EXISTS (SELECT 1 FROM pg_depend d
                      WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
   ORDER BY 1`;

export async function readFunctions(client: pg.ClientBase): Promise<FunctionShape[]> {
  return (await client.query<FunctionShape>(FUNCTIONS_QUERY)).rows;
}

export interface Difference {
  what: string;
  database: string;
  file: string;
}

const ATTRIBUTES: [keyof FunctionShape, string][] = [
  ['kind', 'kind'],
  ['arguments', 'arguments'],
  ['result', 'return type'],
  ['language', 'language'],
  ['volatility', 'volatility'],
  ['parallel', 'parallel safety'],
  ['securityDefiner', 'SECURITY DEFINER'],
  ['strict', 'STRICT'],
  ['leakproof', 'LEAKPROOF'],
  ['cost', 'COST'],
  ['rows', 'ROWS'],
  ['settings', 'SET'],
];

export function differences(database: FunctionShape, file: FunctionShape): Difference[] {
  const found: Difference[] = [];
  for (const [key, what] of ATTRIBUTES) {
    const [a, b] = [JSON.stringify(database[key]), JSON.stringify(file[key])];
    if (a !== b) found.push({ what, database: a, file: b });
  }
  if (database.body !== file.body) found.push({ what: 'body', ...firstDifferentLine(database.body, file.body) });
  if (!found.length && database.definition !== file.definition) {
    found.push({ what: 'pg_get_functiondef', ...firstDifferentLine(database.definition, file.definition) });
  }
  return found;
}

function firstDifferentLine(database: string, file: string): { database: string; file: string } {
  const [a, b] = [database.split('\n'), file.split('\n')];
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const show = (line: string | undefined) => (line === undefined ? 'end of text' : JSON.stringify(line));
  return { database: `line ${i + 1}: ${show(a[i])}`, file: `line ${i + 1}: ${show(b[i])}` };
}

export function describeDifferences(found: Difference[]): string {
  return found.map((d) => `${d.what} (database ${d.database}; file ${d.file})`).join('; ');
}

/** `<name>.sql`; a name PostgreSQL holds several functions under gets `<identity>.sql` per function. */
export function fileNameFor(fn: Pick<FunctionShape, 'identity' | 'name'>, overloaded: boolean): string {
  return `${overloaded ? fn.identity.replaceAll('"', '') : fn.name}.sql`;
}

export interface FileVerdict {
  file: string;
  sql: string;
  identity: string;
  /** new: no function of this signature exists; changed: differs in the ways listed. */
  status: 'unchanged' | 'changed' | 'new';
  differences: Difference[];
}

export interface FunctionReport {
  /** One per file that ran, in an order the changed and new ones can be applied in. */
  verdicts: FileVerdict[];
  /** Files that could not be compared (not one CREATE OR REPLACE, refused by PostgreSQL, a clash). */
  problems: string[];
  /** Functions in the database that no file defines. */
  unfiled: string[];
  /** Files that define a function under another name than fileNameFor gives it. */
  misnamed: string[];
}

const LEADING_COMMENTS = /^(?:[ \t]*(?:--[^\n]*)?\r?\n)*/;
// A file may reference a function, table or type that another file (or the prelude) creates.
const MISSING_DEPENDENCY = new Set(['42883', '42P01', '42704']);

function shapeProblem(sql: string): string | null {
  if (!/^CREATE OR REPLACE (FUNCTION|PROCEDURE)\s/i.test(sql.replace(LEADING_COMMENTS, ''))) {
    return 'must start (after comment lines) with CREATE OR REPLACE FUNCTION';
  }
  return sql.trimEnd().endsWith(';') ? null : 'must end with the semicolon of its statement';
}

/**
 * Runs every file inside one transaction on `client` and rolls it back: the database keeps nothing.
 * `prelude` (the schema changes a new migration makes first) runs before the files and is the state
 * they are compared with. A file that needs another file's function runs in a later pass.
 */
export async function compareFunctionFiles(
  client: pg.ClientBase,
  files: FunctionFile[],
  prelude = '',
): Promise<FunctionReport> {
  const report: FunctionReport = { verdicts: [], problems: [], unfiled: [], misnamed: [] };
  await client.query('BEGIN');
  try {
    if (prelude.trim()) await client.query(prelude);
    const before = new Map((await readFunctions(client)).map((fn) => [fn.identity, fn]));
    const current = new Map(before);
    const definedBy = new Map<string, string>();
    let pending = files.filter((f) => {
      const problem = shapeProblem(f.sql);
      if (problem) report.problems.push(`${f.file}: ${problem}`);
      return !problem;
    });
    while (pending.length) {
      const retry: { file: FunctionFile; error: string }[] = [];
      for (const f of pending) {
        await client.query('SAVEPOINT function_file');
        const outcome = await runFile(client, f, current);
        if ('error' in outcome) {
          await client.query('ROLLBACK TO SAVEPOINT function_file');
          if (outcome.retry) retry.push({ file: f, error: outcome.error });
          else report.problems.push(`${f.file}: ${outcome.error}`);
          continue;
        }
        const fn = outcome.fn;
        const other = definedBy.get(fn.identity);
        if (other) {
          await client.query('ROLLBACK TO SAVEPOINT function_file');
          report.problems.push(`${f.file}: defines ${fn.identity}, which ${other} defines too`);
          continue;
        }
        await client.query('RELEASE SAVEPOINT function_file');
        definedBy.set(fn.identity, f.file);
        current.set(fn.identity, fn);
        const old = before.get(fn.identity);
        const found = old ? differences(old, fn) : [];
        const status = !old ? 'new' : found.length ? 'changed' : 'unchanged';
        report.verdicts.push({ file: f.file, sql: f.sql, identity: fn.identity, status, differences: found });
      }
      if (retry.length === pending.length) {
        for (const r of retry) report.problems.push(`${r.file.file}: ${r.error}`);
        break;
      }
      pending = retry.map((r) => r.file);
    }
    report.unfiled = [...before.keys()].filter((identity) => !definedBy.has(identity));
    const names = [...current.values()].map((fn) => fn.name);
    for (const v of report.verdicts) {
      const fn = current.get(v.identity)!;
      const expected = fileNameFor(fn, names.filter((n) => n === fn.name).length > 1);
      if (v.file !== expected)
        report.misnamed.push(`${v.file}: defines ${v.identity}, so it should be named ${expected}`);
    }
    return report;
  } finally {
    await client.query('ROLLBACK');
  }
}

type RunOutcome = { fn: FunctionShape } | { error: string; retry: boolean };

async function runFile(
  client: pg.ClientBase,
  f: FunctionFile,
  current: Map<string, FunctionShape>,
): Promise<RunOutcome> {
  try {
    // The extended protocol refuses more than one statement: a file holds its function and nothing else.
    await client.query({ text: f.sql, queryMode: 'extended' } as pg.QueryConfig);
  } catch (error) {
    const e = error as { code?: string; message: string; hint?: string };
    const message = e.hint ? `${e.message} (${e.hint})` : e.message;
    return { error: message, retry: MISSING_DEPENDENCY.has(e.code ?? '') };
  }
  const touched = (await readFunctions(client)).filter((fn) => current.get(fn.identity)?.version !== fn.version);
  if (touched.length !== 1) {
    return { error: `changed ${touched.length} functions in the public schema, not one`, retry: false };
  }
  return { fn: touched[0]! };
}
