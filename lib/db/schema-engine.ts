// Prisma's WebAssembly schema engine: `prisma migrate deploy` and `prisma migrate diff` without the
// native engine binary, which these machines cannot download (see docs/DATA_MODEL.md).
// The module is instantiated by hand below, so no --experimental-wasm-modules flag is needed.
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type { MigrationList, SchemaEngine } from '@prisma/schema-engine-wasm';

type EngineModule = typeof import('@prisma/schema-engine-wasm');
let engineModule: Promise<EngineModule> | undefined;

/** What the package's own entry does with an ESM .wasm import, done with WebAssembly.instantiate. */
function loadEngineModule(): Promise<EngineModule> {
  engineModule ??= (async () => {
    const require = createRequire(import.meta.url);
    const bgPath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const dir = path.dirname(bgPath);
    const bg = (await import(pathToFileURL(bgPath).href)) as EngineModule & {
      __wbg_set_wasm(exports: WebAssembly.Exports): void;
    };
    const bytes = readFileSync(path.join(dir, 'schema_engine_bg.wasm'));
    const { instance } = await WebAssembly.instantiate(bytes, {
      './schema_engine_bg.js': bg as unknown as WebAssembly.ModuleImports,
    });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return bg;
  })();
  return engineModule;
}

export const SCHEMA_PATH = path.resolve('prisma/schema.prisma');
export const MIGRATIONS_DIR = path.resolve('prisma/migrations');

export function readSchema(): string {
  return readFileSync(SCHEMA_PATH, 'utf8');
}

/** The migrations folder as the engine wants it (what `prisma migrate deploy` reads). */
export function loadMigrations(dir = MIGRATIONS_DIR): MigrationList {
  const names = existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
  const lockPath = path.join(dir, 'migration_lock.toml');
  return {
    baseDir: dir,
    lockfile: { path: 'migration_lock.toml', content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: names.map((name) => ({
      path: name,
      migrationFile: {
        path: 'migration.sql',
        content: { tag: 'ok' as const, value: readFileSync(path.join(dir, name, 'migration.sql'), 'utf8') },
      },
    })),
  };
}

/**
 * PrismaPg's executeScript splits a migration on every ";", which breaks function bodies. The native
 * engine sends a migration as one script; so does this adapter (PostgreSQL's simple query protocol
 * runs a multi-statement script in one implicit transaction).
 */
const PG_CHAR_OID = 18;
const CHARACTER_COLUMN = 6; // ColumnTypeEnum.Character in @prisma/driver-adapter-utils

type PgField = { dataTypeID: number };
type RawResult = { columnTypes: number[] };
type Queryable = {
  performIO(query: unknown): Promise<{ fields: PgField[] }>;
  queryRaw(query: unknown): Promise<RawResult>;
};

class WholeScriptPg extends PrismaPg {
  override async connect() {
    const adapter = await super.connect();
    // The engine's introspection reads catalog columns of PostgreSQL's one-byte "char" type, which
    // PrismaPg cannot type; the engine expects them as Character. Each call gets its own view of
    // the adapter whose performIO notes those columns, so concurrent queries cannot mix them up.
    const queryable = adapter as unknown as Queryable;
    const queryRaw = queryable.queryRaw;
    const performIO = queryable.performIO;
    queryable.queryRaw = async (query: unknown) => {
      const charColumns: number[] = [];
      const view = Object.create(queryable) as Queryable;
      view.performIO = async (q: unknown) => {
        const result = await performIO.call(queryable, q);
        result.fields.forEach((field, i) => {
          if (field.dataTypeID === PG_CHAR_OID) {
            charColumns.push(i);
            field.dataTypeID = 25; // decode as text; retyped below
          }
        });
        return result;
      };
      const raw = await queryRaw.call(view, query);
      for (const i of charColumns) raw.columnTypes[i] = CHARACTER_COLUMN;
      return raw;
    };
    const driver = adapter as unknown as {
      underlyingDriver(): { query(sql: string): Promise<unknown> };
      onError(e: unknown): never;
    };
    adapter.executeScript = async (script: string) => {
      try {
        await driver.underlyingDriver().query(script);
      } catch (error) {
        driver.onError(error);
      }
    };
    return adapter;
  }
}

export async function withSchemaEngine<T>(
  connectionString: string,
  fn: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  const { SchemaEngine } = await loadEngineModule();
  // Our own pool, so its connections are closed when we are done (the engine does not close them).
  const pool = new pg.Pool({ connectionString, max: 2 });
  const adapter = bindMigrationAwareSqlAdapterFactory(new WholeScriptPg(pool));
  const engine = await SchemaEngine.new({ datamodels: [[SCHEMA_PATH, readSchema()]] }, () => {}, adapter);
  try {
    return await fn(engine);
  } finally {
    engine.free();
    await pool.end();
  }
}

const noFilter = { externalTables: [], externalEnums: [] };

/** Applies every migration not yet applied; same bookkeeping table as `prisma migrate deploy`. */
export async function applyMigrations(ownerUrl: string): Promise<string[]> {
  return await withSchemaEngine(ownerUrl, async (engine) => {
    const out = await engine.applyMigrations({ migrationsList: loadMigrations(), filters: noFilter });
    return out.appliedMigrationNames;
  });
}

/** SQL that takes the live database (at ownerUrl) to schema.prisma; empty when they agree. */
export async function diffDatabaseToSchema(ownerUrl: string): Promise<string> {
  return await withSchemaEngine(ownerUrl, async (engine) => {
    const result = await engine.diff({
      from: {
        tag: 'schemaDatasource',
        files: [{ path: SCHEMA_PATH, content: readSchema() }],
        configDir: path.resolve('.'),
      },
      to: { tag: 'schemaDatamodel', files: [{ path: SCHEMA_PATH, content: readSchema() }] },
      script: true,
      exitCode: null,
      filters: noFilter,
    });
    return result.stdout ?? '';
  });
}

/** Records a failed migration as rolled back, so the next applyMigrations runs it again. */
export async function markRolledBack(ownerUrl: string, migrationName: string): Promise<void> {
  await withSchemaEngine(ownerUrl, (engine) => engine.markMigrationRolledBack({ migrationName }));
}
