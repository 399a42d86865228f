// `npm run sdk:pack`: lib/sdk as the package agent teams install from a tarball. esbuild bundles the
// entry points (the SDK, the sandbox provider's client, the framework boundaries: AI SDK, OpenAI
// Agents, LangChain, MCP, the audit-export verifier, and the `effect-ledger` CLI, the package's bin) into ES modules, tsc writes the declarations, and npm pack makes
// `<name>-<version>.tgz`. The package has one dependency, `yaml` (the CLI's apply): the build refuses any
// input outside lib/sdk and any import that is neither a Node built-in, that dependency, nor a
// boundary's own framework, which is an optional peer dependency (a team using one boundary installs only that framework, which it already has).
// Output (gitignored): .sdk-build/package/ (what is packed) and .sdk-build/*.tgz.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SDK = path.join(ROOT, 'lib/sdk');
/** The package's entry points: subpath -> source file in lib/sdk. */
const ENTRIES = {
  index: 'index.ts',
  sandbox: 'sandbox.ts',
  ai: 'adapters/ai.ts',
  'openai-agents': 'adapters/openai-agents.ts',
  langchain: 'adapters/langchain.ts',
  mcp: 'mcp/index.ts',
  audit: 'audit/index.ts',
  /** The `effect-ledger` CLI (the package's `bin`, not an export). */
  cli: 'cli/bin.ts',
} as const;
/** The executable the CLI's bundle is run as. */
const BIN = { 'effect-ledger': './dist/cli.js' };
/** The frameworks the boundaries import, as optional peer dependencies, with the range each is
 *  supported in: a project on any release in it installs the SDK without a resolution error. The
 *  floor is the oldest release tests/integration/sdk-peers.test.ts installs and runs; 0.x ranges
 *  stay within one minor, since a 0.x minor release may break. */
export const PEER_RANGES = {
  ai: '^7.0.0',
  '@openai/agents': '^0.20.0',
  '@langchain/core': '^1.4.0',
  '@modelcontextprotocol/sdk': '^1.32.0',
  zod: '^4.1.8',
} as const;
const PEERS = Object.keys(PEER_RANGES) as (keyof typeof PEER_RANGES)[];
/** The package's one dependency: the CLI's apply reads YAML setup files with it (a YAML parser is
 *  not something to write by hand). Its range starts at the version the repository pins. */
const DEPENDENCIES = ['yaml'] as const;
const isDependency = (specifier: string) => (DEPENDENCIES as readonly string[]).includes(specifier);
const isPeer = (specifier: string) => PEERS.some((p) => specifier === p || specifier.startsWith(`${p}/`));

export interface PackedSdk {
  name: string;
  version: string;
  /** Absolute path of the .tgz. */
  tarball: string;
  /** The folder that was packed. */
  packageDir: string;
  /** Paths inside the tarball. */
  files: string[];
}

interface RootPackage {
  version: string;
  devDependencies?: Record<string, string>;
  dependencies?: Record<string, string>;
  license?: string;
  engines?: Record<string, string>;
}

/** Whether an exact version x.y.z lies in a caret range ^a.b.c (npm's meaning, 0.x included). Written
 *  here because the range check is this one comparison and semver is not a dependency of the repo. */
export function satisfiesCaret(version: string, range: string): boolean {
  const v = /^(\d+)\.(\d+)\.(\d+)$/.exec(version)?.slice(1).map(Number);
  const r = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(range)?.slice(1).map(Number);
  if (!v || !r) return false;
  const [vMajor, vMinor, vPatch] = v as [number, number, number];
  const [rMajor, rMinor, rPatch] = r as [number, number, number];
  const atLeast = vMajor !== rMajor ? vMajor > rMajor : vMinor !== rMinor ? vMinor > rMinor : vPatch >= rPatch;
  return atLeast && vMajor === rMajor && (rMajor > 0 || vMinor === rMinor);
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`;

async function bundle(dist: string): Promise<string[]> {
  const result = await build({
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([out, src]) => [out, path.join(SDK, src)])),
    outdir: dist,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    metafile: true,
    external: [...PEERS.flatMap((p) => [p, `${p}/*`]), ...DEPENDENCIES],
    logLevel: 'warning',
  });
  const outside = Object.keys(result.metafile.inputs).filter((input) => !input.startsWith('lib/sdk/'));
  if (outside.length) throw new Error(`the SDK bundle pulled in files outside lib/sdk: ${outside.join(', ')}`);
  const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
  const foreign = Object.values(result.metafile.outputs)
    .flatMap((o) =>
      o.imports
        .filter((i) => i.external && !builtins.has(i.path) && !isPeer(i.path) && !isDependency(i.path))
        .map((i) => i.path),
    )
    .filter((p, i, all) => all.indexOf(p) === i);
  if (foreign.length) throw new Error(`the SDK bundle imports packages: ${foreign.join(', ')}`);
  return Object.entries(result.metafile.outputs).map(([file, o]) => `${path.basename(file)} ${kb(o.bytes)}`);
}

/** `tsc --emitDeclarationOnly` for lib/sdk, through the compiler API (one process, no spawn). */
function declarations(dist: string): number {
  const program = ts.createProgram(
    Object.values(ENTRIES).map((src) => path.join(SDK, src)),
    {
      declaration: true,
      emitDeclarationOnly: true,
      outDir: dist,
      // rootDir makes tsc refuse any file outside lib/sdk, like the bundle check above.
      rootDir: SDK,
      allowImportingTsExtensions: true,
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: ['node'],
      typeRoots: [path.join(ROOT, 'node_modules/@types')],
      strict: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: true,
    },
  );
  // A full check of lib/sdk under the package's own options: nothing is packed from sources that do not compile.
  const problems = [...ts.getPreEmitDiagnostics(program)];
  const emitted = problems.length ? undefined : program.emit();
  problems.push(...(emitted?.diagnostics ?? []));
  if (problems.length || !emitted || emitted.emitSkipped) {
    const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
    throw new Error(`declarations failed:\n${ts.formatDiagnostics(problems, host)}`);
  }
  // The sources import './x.ts'; a consumer's TypeScript looks for './x.js' next to './x.d.ts'.
  const files = (readdirSync(dist, { recursive: true }) as string[]).filter((f) => f.endsWith('.d.ts'));
  for (const file of files) {
    const text = readFileSync(path.join(dist, file), 'utf8');
    writeFileSync(path.join(dist, file), text.replace(/(from\s+|import\()(['"])(\.\.?\/[^'"]+)\.ts\2/g, '$1$2$3.js$2'));
  }
  return files.length;
}

function manifest(root: RootPackage): Record<string, unknown> {
  const entry = (name: keyof typeof ENTRIES) => ({
    types: `./dist/${ENTRIES[name].replace(/\.ts$/, '.d.ts')}`,
    default: `./dist/${name}.js`,
  });
  // Each pinned devDependency (the version the repository's own tests run) must lie in its range.
  for (const p of PEERS) {
    const pinned = root.devDependencies?.[p] ?? root.dependencies?.[p];
    if (pinned && !satisfiesCaret(pinned, PEER_RANGES[p]))
      throw new Error(`${p} ${pinned} (package.json) is outside the peer range ${PEER_RANGES[p]}`);
  }
  const peerDependencies = { ...PEER_RANGES };
  return {
    name: '@effect-ledger/sdk',
    version: root.version,
    description:
      'Effect Ledger SDK: claim every side effect of an AI agent before the provider call and report its outcome.',
    // The same terms as the project: no license granted unless the project ships one.
    license: root.license ?? 'UNLICENSED',
    private: true,
    type: 'module',
    engines: { node: root.engines?.node ?? '>=20.19' },
    exports: {
      '.': entry('index'),
      './sandbox': entry('sandbox'),
      './ai': entry('ai'),
      './openai-agents': entry('openai-agents'),
      './langchain': entry('langchain'),
      './mcp': entry('mcp'),
      './audit': entry('audit'),
      './package.json': './package.json',
    },
    dependencies: Object.fromEntries(
      DEPENDENCIES.map((d) => {
        const pinned = root.devDependencies?.[d] ?? root.dependencies?.[d];
        if (!pinned) throw new Error(`${d} is not in package.json`);
        return [d, `^${pinned}`];
      }),
    ),
    peerDependencies,
    peerDependenciesMeta: Object.fromEntries(PEERS.map((p) => [p, { optional: true }])),
    bin: BIN,
    main: './dist/index.js',
    types: './dist/index.d.ts',
    files: ['dist'],
    sideEffects: false,
  };
}

function npmPack(packageDir: string, outDir: string): { filename: string; files: { path: string }[]; size: number } {
  const result = spawnSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', outDir], {
    cwd: packageDir,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' },
  });
  if (result.status !== 0) throw new Error(`npm pack failed (exit ${result.status}):\n${result.stderr}`);
  return (JSON.parse(result.stdout) as { filename: string; files: { path: string }[]; size: number }[])[0]!;
}

export async function packSdk(options: { outDir?: string; log?: (line: string) => void } = {}): Promise<PackedSdk> {
  const outDir = options.outDir ?? path.join(ROOT, '.sdk-build');
  const log = options.log ?? ((line: string) => console.log(`sdk:pack  ${line}`));
  const rel = (p: string) => path.relative(process.cwd(), p) || '.';
  const packageDir = path.join(outDir, 'package');
  const dist = path.join(packageDir, 'dist');
  rmSync(packageDir, { recursive: true, force: true });
  mkdirSync(dist, { recursive: true });
  for (const old of readdirSync(outDir).filter((f) => f.endsWith('.tgz'))) rmSync(path.join(outDir, old));

  const root = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as RootPackage;
  log(`1/4 bundling lib/sdk (esbuild, ESM, node20) into ${rel(dist)}`);
  log(`    ${(await bundle(dist)).join(', ')}`);
  // The bin runs as a program: npm links it, and the shell needs to know which interpreter runs it.
  const cli = path.join(dist, 'cli.js');
  writeFileSync(cli, `#!/usr/bin/env node\n${readFileSync(cli, 'utf8')}`, { mode: 0o755 });
  log('2/4 writing declarations (tsc --emitDeclarationOnly)');
  log(`    ${declarations(dist)} .d.ts files`);
  const pkg = manifest(root);
  writeFileSync(path.join(packageDir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  copyFileSync(path.join(SDK, 'README.md'), path.join(packageDir, 'README.md'));
  const license = ['LICENSE', 'LICENSE.md', 'LICENSE.txt'].find((f) => existsSync(path.join(ROOT, f)));
  if (license) copyFileSync(path.join(ROOT, license), path.join(packageDir, license));
  log(
    `3/4 package.json (${pkg.name}@${pkg.version}, license ${pkg.license}, dependency ${DEPENDENCIES.join(', ')}, optional peers ${PEERS.join(', ')}), README.md${license ? `, ${license}` : ''}`,
  );
  log('4/4 npm pack');
  const packed = npmPack(packageDir, outDir);
  const tarball = path.join(outDir, packed.filename);
  log(`    ${rel(tarball)} (${packed.files.length} files, ${kb(packed.size)})`);
  return {
    name: String(pkg.name),
    version: String(pkg.version),
    tarball,
    packageDir,
    files: packed.files.map((f) => f.path),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  packSdk().catch((error: unknown) => {
    console.error(`sdk:pack failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
