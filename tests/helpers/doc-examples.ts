// The TypeScript examples of the docs as a team takes them: every ```ts block of a page, the block
// with its types stripped (what `npx tsx` or Node's own type stripping runs), and a strict type check
// of blocks saved in a scratch project that installed the packed SDK and the frameworks.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** The pages whose TypeScript blocks are complete files a team can copy. */
export const DOC_PAGES = ['README.md', 'docs/SDK.md', 'docs/INTEGRATIONS.md', 'lib/sdk/README.md'];

/** Every ```ts block of a markdown page, verbatim, in order. */
export function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The first ```ts block after a heading. */
export function tsBlockUnder(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}`);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const block = tsBlocks(markdown.slice(start))[0];
  if (block === undefined) throw new Error(`no ts block under "${heading}"`);
  return block;
}

/** A TypeScript example as Node runs it once the types are stripped. */
export function stripTypes(source: string): string {
  return ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
}

/**
 * Saves each block as its own module in `dir` (a project whose node_modules has the SDK, the
 * frameworks and @types/node) and checks them together with `strict: true`, as a team's tsconfig
 * would. Returns the problems as "file:line: message".
 */
export function typecheckStrict(dir: string, blocks: { name: string; source: string }[]): string[] {
  const files = blocks.map((b) => {
    const file = path.join(dir, `${b.name}.ts`);
    writeFileSync(file, b.source);
    return file;
  });
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: ['node'],
    typeRoots: [path.join(dir, 'node_modules/@types')],
    // The frameworks' own declarations are theirs to check; the examples and the SDK's are checked.
    skipLibCheck: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file
      ? `${path.relative(dir, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}`
      : '';
    return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}
