// What `npm run migrate:new` writes: the schema diff (schema.prisma against the migrated database),
// then every function file of prisma/sql/functions that differs from the function the migrations
// left, as its CREATE OR REPLACE statement (a new file creates its function).
import path from 'node:path';
import pg from 'pg';
import { diffDatabaseToSchema } from './schema-engine.ts';
import {
  compareFunctionFiles,
  FUNCTIONS_DIR,
  readFunctionFiles,
  type FileVerdict,
  type FunctionReport,
} from './sql-functions.ts';

export interface MigrationDraft {
  /** The new migration's SQL; empty when schema.prisma and every function file match the database. */
  sql: string;
  schemaSql: string;
  /** The function files written into `sql`, in its order. */
  functions: FileVerdict[];
  report: FunctionReport;
}

/**
 * `ownerUrl` names a database with every migration applied (migrate:new uses a scratch one). Nothing
 * is written to it: the function files are compared inside a transaction that is rolled back, after
 * the schema diff, so a file may use what the diff creates.
 */
export async function draftMigration(ownerUrl: string, functionsDir = FUNCTIONS_DIR): Promise<MigrationDraft> {
  const diff = await diffDatabaseToSchema(ownerUrl);
  const schemaSql = !diff.trim() || /^-- This is an empty migration/m.test(diff) ? '' : diff;
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  let report: FunctionReport;
  try {
    report = await compareFunctionFiles(client, readFunctionFiles(functionsDir), schemaSql);
  } finally {
    await client.end();
  }
  const functions = report.verdicts.filter((v) => v.status !== 'unchanged');
  const folder = path.relative(process.cwd(), functionsDir) || functionsDir;
  const parts = schemaSql ? [schemaSql.trimEnd()] : [];
  for (const v of functions) {
    const why = v.status === 'new' ? 'new function' : `changed: ${v.differences.map((d) => d.what).join(', ')}`;
    parts.push(`-- ${folder}/${v.file} (${why})\n${v.sql.trimEnd()}`);
  }
  return { sql: parts.length ? `${parts.join('\n\n')}\n` : '', schemaSql, functions, report };
}
