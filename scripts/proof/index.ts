// `npm run proof`: the reliability and security proof (issue 6). Runs every part in
// scripts/proof/parts/*.ts at full scale, one after another, each on its own fresh database, and
// writes docs/RELIABILITY.md: per part what was tried, how many times, and what was lost, duplicated
// or allowed without authority (the goal everywhere: zero). Exits non-zero when any figure is not
// zero or a part fails. PROOF_ONLY=crash-matrix,security runs some parts only.
// First, before any part loads Next: pages rendered in-process need Next's request storage bound.
import './support/abuse-als.ts';
import { readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { withCredentials } from '@/lib/db/roles.ts';
import { startThrowawayDatabase } from '@/lib/db/scratch.ts';
import { PART_ORDER, type ProofDatabase, type ProofPart, type ProofSection } from './section.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const APP_USER = 'ledger_app_proof';

interface PartOutcome {
  name: string;
  seconds: number;
  section?: ProofSection;
  error?: string;
}

function partNames(): string[] {
  const only = process.env.PROOF_ONLY?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const found = readdirSync(path.join(here, 'parts'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -3))
    .filter((name) => !only || only.includes(name));
  const rank = (n: string) => (PART_ORDER.indexOf(n) === -1 ? PART_ORDER.length : PART_ORDER.indexOf(n));
  return found.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

async function main() {
  const started = Date.now();
  const names = partNames();
  console.log(`[proof] parts: ${names.join(', ')}`);
  // One server for every part; each part gets databases cloned from the migrated template.
  // fsync stays on: parts that kill processes must see what a production server keeps.
  const server = await startThrowawayDatabase({ name: 'proof_template', appUser: APP_USER, fsync: true });
  const admin = new pg.Client({ connectionString: server.ownerUrl });
  await admin.connect();
  const created: string[] = [];
  const newDatabase = async (): Promise<ProofDatabase> => {
    const name = `proof_${created.length}_${Date.now().toString(36)}`;
    await admin.query(`CREATE DATABASE ${name} TEMPLATE proof_template`);
    created.push(name);
    const u = new URL(server.ownerUrl);
    u.pathname = `/${name}`;
    return { ownerUrl: u.toString(), appUrl: withCredentials(u.toString(), APP_USER, `${APP_USER}-password`) };
  };
  const outcomes: PartOutcome[] = [];
  try {
    for (const name of names) {
      const t0 = Date.now();
      console.log(`\n[proof] ${name}: starting`);
      try {
        const mod = (await import(pathToFileURL(path.join(here, 'parts', `${name}.ts`)).href)) as { proof?: ProofPart };
        if (typeof mod.proof !== 'function') throw new Error(`scripts/proof/parts/${name}.ts exports no \`proof\``);
        const section = await mod.proof({
          scale: 'full',
          newDatabase,
          log: (line) => console.log(`[proof] ${name}: ${line}`),
        });
        outcomes.push({ name, seconds: (Date.now() - t0) / 1000, section });
      } catch (error) {
        console.error(`[proof] ${name}: FAILED`, error);
        outcomes.push({
          name,
          seconds: (Date.now() - t0) / 1000,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        });
      }
      console.log(`[proof] ${name}: finished in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
  } finally {
    await admin.end();
    await server.stop();
  }
  const report = render(outcomes, (Date.now() - started) / 1000);
  writeFileSync('docs/RELIABILITY.md', report.text);
  console.log(`\n[proof] wrote docs/RELIABILITY.md: ${report.verdict}`);
  process.exit(report.ok ? 0 : 1);
}

const fmt = (n: number) => n.toLocaleString('en-US');

function render(outcomes: PartOutcome[], seconds: number): { text: string; ok: boolean; verdict: string } {
  let trials = 0;
  let lost = 0;
  let duplicated = 0;
  let unauthorized = 0;
  const failed = outcomes.filter((o) => o.error).map((o) => o.name);
  const body: string[] = [];
  for (const o of outcomes) {
    if (!o.section) {
      body.push(`## ${o.name}: the part failed`, '', '```', o.error ?? '', '```', '');
      continue;
    }
    const s = o.section;
    body.push(
      `## ${s.title}`,
      '',
      `Proves: ${s.proves}. Part \`scripts/proof/parts/${o.name}.ts\`, ${o.seconds.toFixed(0)} s.`,
      '',
    );
    body.push('| tried | times | lost | duplicated | unauthorized | observed |', '|---|---:|---:|---:|---:|---|');
    for (const r of s.rows) {
      trials += r.trials;
      lost += r.lost;
      duplicated += r.duplicated;
      unauthorized += r.unauthorized;
      body.push(
        `| ${cell(r.tried)} | ${fmt(r.trials)} | ${fmt(r.lost)} | ${fmt(r.duplicated)} | ${fmt(r.unauthorized)} | ${cell(r.observed)} |`,
      );
    }
    if (s.notes?.length) body.push('', ...s.notes.map((n) => `- ${n}`));
    body.push('');
  }
  const ok = outcomes.length > 0 && failed.length === 0 && lost === 0 && duplicated === 0 && unauthorized === 0;
  const verdict = `${fmt(trials)} trials; ${fmt(lost)} lost, ${fmt(duplicated)} duplicated, ${fmt(unauthorized)} unauthorized${failed.length ? `; parts failed: ${failed.join(', ')}` : ''}`;
  const mem = Math.round(os.totalmem() / 2 ** 30);
  const header = [
    '# Reliability and security proof',
    '',
    `Written by \`npm run proof\` on ${new Date().toISOString().slice(0, 10)} in ${(seconds / 60).toFixed(1)} minutes on ${os.cpus().length} cores, ${mem} GiB, ${os.type()} ${os.release()}, Node ${process.version}, embedded PostgreSQL 18 (fsync on).`,
    'A reduced version of every part runs in `npm test` (`tests/integration/proof-*.test.ts`, and the console load check in `tests/e2e/zz-console-load.spec.ts`).',
    '',
    `**${ok ? 'Every part passed' : 'NOT PASSED'}: ${verdict}.**`,
    '',
    'Columns: *lost* is an effect that should have happened and did not, with no state saying so; *duplicated* is a target delivered more than once, counted at the provider; *unauthorized* is a call that succeeded without authority, a refusal that was not audited, or bad input that changed something.',
    '',
  ];
  return { text: [...header, ...body].join('\n'), ok, verdict };
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

await main();
