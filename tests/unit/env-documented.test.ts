// Settings in one place: every environment variable the code reads (lib/env.ts's schema, and any
// process.env read elsewhere in the product's code) is listed in .env.example and in
// docs/DEPLOYMENT.md's table, and neither lists one the code does not read.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

// Developer tools with their own documentation (docs/BENCHMARKS.md, the proof harness), and what the
// operating system or CI sets: not product settings.
const TOOLS = /^scripts\/(bench|proof)\//;
const PLATFORM = new Set(['USER', 'CI', 'FORCE_COLOR', 'PATH', 'HOME']);

function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir)).flatMap((name) => {
    const rel = path.join(dir, name);
    if (name === 'node_modules' || name === 'generated') return [];
    if (statSync(path.join(root, rel)).isDirectory()) return sources(rel);
    return /\.(ts|tsx|js|mjs)$/.test(name) ? [rel] : [];
  });
}

function readByCode(): Set<string> {
  const names = new Set<string>();
  const envSchema = read('lib/env.ts').slice(0, read('lib/env.ts').indexOf('\n});'));
  for (const m of envSchema.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)) names.add(m[1]!);
  const files = [...['lib', 'app', 'components', 'scripts'].flatMap(sources), 'next.config.js', 'prisma.config.ts'];
  for (const file of files.filter((f) => !TOOLS.test(f))) {
    for (const m of read(file).matchAll(/process\.env(?:\.([A-Z][A-Z0-9_]+)|\[['"]([A-Z][A-Z0-9_]+)['"]\])/g)) {
      const name = m[1] ?? m[2]!;
      if (!PLATFORM.has(name)) names.add(name);
    }
  }
  return names;
}

function inEnvExample(): Set<string> {
  return new Set([...read('.env.example').matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!));
}

function inDeploymentTable(): Set<string> {
  const doc = read('docs/DEPLOYMENT.md');
  const table = doc.slice(doc.indexOf('## Environment variables'));
  const rows = table
    .slice(0, table.indexOf('\n## '))
    .split('\n')
    .filter((l) => l.startsWith('| `'));
  return new Set(rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!)));
}

describe('environment variables', () => {
  const code = readByCode();

  it('reads a sensible set (the test sees lib/env.ts)', () => {
    expect(code.has('DATABASE_URL')).toBe(true);
    expect(code.size).toBeGreaterThan(40);
  });

  it('.env.example lists every variable the code reads, and no other', () => {
    const listed = inEnvExample();
    expect([...code].filter((n) => !listed.has(n)).sort(), 'read but missing from .env.example').toEqual([]);
    expect([...listed].filter((n) => !code.has(n)).sort(), 'in .env.example but never read').toEqual([]);
  });

  it("DEPLOYMENT.md's table lists every variable the code reads, and no other", () => {
    const listed = inDeploymentTable();
    expect([...code].filter((n) => !listed.has(n)).sort(), 'read but missing from the table').toEqual([]);
    expect([...listed].filter((n) => !code.has(n)).sort(), 'in the table but never read').toEqual([]);
  });
});
