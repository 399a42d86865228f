// docs/RULES.md states every domain rule with the code that enforces it and the tests that prove it.
// Code moves (files split, SQL moves between migrations), and a rules document that names files
// which no longer exist, or tests that no longer prove what it says, is worse than none. This test
// keeps it honest: every rule id has a row, every path it names exists, and every test file it cites
// for a rule has a test title that names that rule. It also keeps the documentation self-contained:
// every link in README.md and docs/*.md must resolve to a file inside the repository.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RULES_DOC = 'docs/RULES.md';

// The rule families and how many rules each has: K1-K4, S1-S7, E1-E4, P1-P4, F1-F6, R1-R3, C1-C3,
// V1-V2, T1, A1-A5, Z1-Z8. A rule added to the domain is added here, and then needs its row.
const FAMILIES: [family: string, count: number][] = [
  ['K', 4],
  ['S', 7],
  ['E', 4],
  ['P', 4],
  ['F', 6],
  ['R', 3],
  ['C', 3],
  ['V', 2],
  ['T', 1],
  ['A', 5],
  ['Z', 8],
];
const RULE_IDS = FAMILIES.flatMap(([family, count]) => Array.from({ length: count }, (_, i) => `${family}${i + 1}`));

// A backticked token that starts with one of the repository's top-level folders is a path. Other
// inline code (SQL names, commands, `v1`) is not checked.
const PATH_TOKEN = /^(?:app|components|docs|lib|prisma|public|scripts|tests)\//;
const ENFORCED = 'Enforced by';
const PROVED = 'Proved by';

function read(relative: string): string {
  return readFileSync(path.join(ROOT, relative), 'utf8');
}

function backticked(text: string): string[] {
  return [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!.trim());
}

function pathsIn(text: string): string[] {
  return backticked(text).filter((t) => PATH_TOKEN.test(t));
}

/** The id as a word: S1 must not be found inside S10 or AS1. */
function mentions(text: string, id: string): boolean {
  return new RegExp(`(?<![A-Za-z0-9])${id}(?![A-Za-z0-9])`).test(text);
}

interface RuleRow {
  id: string;
  line: number;
  enforced: string;
  proved: string;
}

interface ParsedDoc {
  rows: RuleRow[];
  problems: string[];
}

function splitRow(line: string): string[] {
  // The outer pipes frame the row; an escaped pipe (\|) belongs to its cell.
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

/** Rows of the family tables: a table row whose first cell is a rule id. Other tables are skipped. */
function parseRules(markdown: string): ParsedDoc {
  const rows: RuleRow[] = [];
  const problems: string[] = [];
  let header: string[] | null = null;
  markdown.split('\n').forEach((line, index) => {
    if (!line.trimStart().startsWith('|')) {
      header = null;
      return;
    }
    const cells = splitRow(line);
    if (header === null) {
      header = cells;
      return;
    }
    if (cells.every((c) => /^:?-+:?$/.test(c))) return;
    const id = cells[0]!;
    if (!/^[A-Z]\d+$/.test(id)) return;
    const where = `${RULES_DOC} line ${index + 1}`;
    if (!RULE_IDS.includes(id)) {
      problems.push(`${id}: ${where} has a row for a rule id that is not in the family list`);
      return;
    }
    const enforcedAt = header.indexOf(ENFORCED);
    const provedAt = header.indexOf(PROVED);
    if (enforcedAt < 0 || provedAt < 0) {
      problems.push(`${id}: the table at ${where} has no "${ENFORCED}" and "${PROVED}" columns`);
      return;
    }
    if (cells.length !== header.length) {
      problems.push(`${id}: ${where} has ${cells.length} cells, its table has ${header.length} columns`);
      return;
    }
    rows.push({ id, line: index + 1, enforced: cells[enforcedAt]!, proved: cells[provedAt]! });
  });
  return { rows, problems };
}

/** Titles of describe / it / test calls (also .skip, .each(...) and the like), across line breaks. */
function testTitles(source: string): string[] {
  const call =
    /(?<![\w.$])(?:describe|it|test)(?:\.(?:each|skip|only|todo|concurrent|sequential|fails)(?:\([^)]*\))?)*\s*\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g;
  return [...source.matchAll(call)].map((m) => m[2]!);
}

const titlesCache = new Map<string, string[]>();
function titlesOf(relative: string): string[] {
  let titles = titlesCache.get(relative);
  if (!titles) {
    titles = testTitles(read(relative));
    titlesCache.set(relative, titles);
  }
  return titles;
}

describe(RULES_DOC, () => {
  const markdown = read(RULES_DOC);
  const { rows, problems: parseProblems } = parseRules(markdown);

  it('has one row for every rule id of every family, and no other', () => {
    const problems = [...parseProblems];
    for (const id of RULE_IDS) {
      const found = rows.filter((r) => r.id === id);
      if (found.length === 0) problems.push(`${id}: no row in ${RULES_DOC}`);
      if (found.length > 1)
        problems.push(`${id}: ${found.length} rows in ${RULES_DOC} (lines ${found.map((r) => r.line).join(', ')})`);
    }
    expect(problems).toEqual([]);
  });

  it('names only files that exist, and every rule names where it is enforced and proved', () => {
    const problems: string[] = [];
    const inRows = new Set<number>();
    for (const row of rows) {
      inRows.add(row.line);
      for (const [column, cell] of [
        [ENFORCED, row.enforced],
        [PROVED, row.proved],
      ] as const) {
        const paths = pathsIn(cell);
        if (paths.length === 0) problems.push(`${row.id}: the "${column}" cell names no file`);
        for (const p of paths)
          if (!existsSync(path.join(ROOT, p))) problems.push(`${row.id}: \`${p}\` (${column}) does not exist`);
      }
    }
    // Paths elsewhere (the rule text, the transition table, the introduction) must exist too.
    markdown.split('\n').forEach((line, index) => {
      const cells = line.trimStart().startsWith('|') ? splitRow(line) : [];
      const row = rows.find((r) => r.line === index + 1);
      const text = row ? cells.filter((c) => c !== row.enforced && c !== row.proved).join(' ') : line;
      for (const p of pathsIn(text)) {
        if (!existsSync(path.join(ROOT, p)))
          problems.push(`${row ? row.id : `${RULES_DOC} line ${index + 1}`}: \`${p}\` does not exist`);
      }
    });
    expect(problems).toEqual([]);
  });

  it('cites, for each rule, test files with a describe, it or test title that names the rule', () => {
    const problems: string[] = [];
    for (const row of rows) {
      // "None ..." admits that no test names the rule yet; its files are only the nearest tests,
      // whose existence the previous check covers.
      if (/^none\b/i.test(row.proved)) continue;
      for (const p of pathsIn(row.proved)) {
        if (!p.startsWith('tests/')) {
          problems.push(`${row.id}: \`${p}\` (${PROVED}) is not a test file under tests/`);
          continue;
        }
        if (!existsSync(path.join(ROOT, p))) continue;
        if (!titlesOf(p).some((title) => mentions(title, row.id)))
          problems.push(`${row.id}: \`${p}\` has no describe, it or test title that names ${row.id}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('documentation links', () => {
  /** Markdown without fenced code blocks and inline code: link syntax inside code is not a link. */
  function withoutCode(markdown: string): string[] {
    const lines: string[] = [];
    let fence: string | null = null;
    for (const line of markdown.split('\n')) {
      const opener = /^\s*(```+|~~~+)/.exec(line)?.[1];
      if (fence !== null) {
        if (opener && opener[0] === fence[0] && opener.length >= fence.length) fence = null;
        lines.push('');
        continue;
      }
      if (opener) {
        fence = opener;
        lines.push('');
        continue;
      }
      lines.push(line.replace(/``[^`]*``|`[^`\n]*`/g, ''));
    }
    return lines;
  }

  function linkTargets(line: string): string[] {
    return [
      // [text](target), ![alt](target), also nested ([![alt](img)](target)); optional "title".
      ...line.matchAll(/\]\(\s*<?([^()\s<>]+)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g),
      // [label]: target (reference definitions)
      ...line.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/g),
      // <a href="..."> and <img src="...">
      ...line.matchAll(/\b(?:href|src)\s*=\s*["']([^"']+)["']/g),
    ].map((m) => m[1]!);
  }

  it('every link in README.md and docs/*.md resolves to a file inside the repository', () => {
    const files = [
      'README.md',
      ...readdirSync(path.join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const problems: string[] = [];
    for (const file of files) {
      withoutCode(read(file)).forEach((line, index) => {
        for (const target of linkTargets(line)) {
          const where = `${file} line ${index + 1}`;
          if (target.startsWith('#')) continue;
          // The repository is read on its own: a link to a web page or to a machine path leads nowhere.
          if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
            problems.push(`${where}: "${target}" links outside the repository`);
            continue;
          }
          if (target.startsWith('/')) {
            problems.push(`${where}: "${target}" is an absolute path; link relative to the file`);
            continue;
          }
          let relative: string;
          try {
            relative = decodeURIComponent(target.replace(/[#?].*$/, ''));
          } catch {
            problems.push(`${where}: "${target}" is not a valid link`);
            continue;
          }
          const resolved = path.resolve(ROOT, path.dirname(file), relative);
          const fromRoot = path.relative(ROOT, resolved);
          if (fromRoot.startsWith('..') || path.isAbsolute(fromRoot)) {
            problems.push(`${where}: "${target}" points outside the repository`);
          } else if (!existsSync(resolved)) {
            problems.push(`${where}: "${target}" does not exist (resolved to ${fromRoot})`);
          }
        }
      });
    }
    expect(problems).toEqual([]);
  });
});
