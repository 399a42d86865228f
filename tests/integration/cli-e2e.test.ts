// The `effect-ledger` CLI as ops teams get it: the SDK tarball (npm run sdk:pack) installed in a
// project outside the repository, its bin run with node against the API served over real HTTP by
// the production front, with people's access tokens. Each command's exit code (0 done, 1 refused,
// 2 usage) and what it changed in the ledger.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packSdk } from '@/scripts/sdk-pack.ts';
import { startApiServer } from '@/scripts/bench/sdk-http-server.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, makeTool, suffix } from '../helpers/factories.ts';
import { person, type Person } from './manage-support.ts';
import { makeCampaign } from './replay-fixtures.ts';

let t: TestDatabase;
let api: { url: string; stop(): Promise<void> };
let scratch: string;
let bin: string;
let ops: { alice: Person; bob: Person; support: Person; auditor: Person; admin: Person };

// A route of the environment, whose name a setup file may not take; it takes only an event no test
// here raises. CLI_E2E_MISSING_SECRET is the secret variable of a route the file adds, unset.
process.env.NOTIFY_WEBHOOK_ROUTES = JSON.stringify({
  'env-audit': {
    url: 'http://127.0.0.1:9/never',
    events: ['audit.verification_failed'],
    secretEnv: 'CLI_E2E_MISSING_SECRET',
  },
});
delete process.env.CLI_E2E_MISSING_SECRET;

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 8 });
  process.env.DATABASE_URL = t.appUrl;
  (await import('@/lib/env.ts')).resetEnvCache();
  api = await startApiServer(t.appUrl, 4);
  ops = {
    alice: await person(t.db, 'operator'),
    bob: await person(t.db, 'operator'),
    support: await person(t.db, 'support'),
    auditor: await person(t.db, 'auditor'),
    admin: await person(t.db, 'admin'),
  };
  scratch = mkdtempSync(path.join(tmpdir(), 'effect-ledger-cli-'));
  const packed = await packSdk({ outDir: path.join(scratch, 'build'), log: () => {} });
  const project = path.join(scratch, 'ops');
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'ops', private: true }));
  const install = await run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', packed.tarball],
    project,
  );
  if (install.code !== 0) throw new Error(`npm install of the tarball failed:\n${install.stderr}`);
  bin = path.join(project, 'node_modules/.bin/effect-ledger');
}, 180_000);

afterAll(async () => {
  await api?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

function run(command: string, args: string[], cwd: string, env: Record<string, string | undefined> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The CLI as `who`, configured through the environment. */
const cli = (who: Person | null, ...args: string[]) =>
  run(bin, args, scratch, {
    EFFECT_LEDGER_URL: api.url,
    EFFECT_LEDGER_TOKEN: who?.token,
    EFFECT_LEDGER_CONFIG: who ? undefined : path.join(scratch, 'none.json'),
  });

describe('the effect-ledger CLI from the packed SDK', () => {
  it('usage errors exit 2: no command, an unknown one, a missing argument, no token configured', async () => {
    expect((await cli(ops.alice)).code).toBe(2);
    expect((await cli(ops.alice, 'frobnicate')).code).toBe(2);
    const noReason = await cli(ops.alice, 'revoke', 'some-key');
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain('--reason');
    const unconfigured = await cli(null, 'runs', 'list');
    expect(unconfigured.code).toBe(2);
    expect(unconfigured.stderr).toContain('config file');
    // A config file instead of the environment.
    const config = path.join(scratch, 'config.json');
    writeFileSync(config, JSON.stringify({ url: api.url, token: ops.auditor.token }));
    const fromFile = await run(bin, ['runs', 'list', '--json'], scratch, { EFFECT_LEDGER_CONFIG: config });
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toHaveProperty('rows');
  });

  it('runs list (table and --json), and plan approve names the version it saw: twice is refused (exit 1)', async () => {
    const { submitPlan } = await import('@/lib/ledger/index.ts');
    const tool = await makeTool(t.db);
    const run0 = await makeRun(t.db);
    await submitPlan(
      { db: t.db, actor: { kind: 'system', id: 'test', label: 'test' } },
      {
        runId: run0.runId,
        items: [{ tool: tool.name, action: 'receipt', recordId: 'r', target: `p-${suffix()}@example.com` }],
      },
    );
    const listed = await cli(ops.alice, 'runs', 'list');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^ID\s+WORKFLOW\s+STATUS/);
    expect(listed.stdout).toContain(run0.runId);
    const json = await cli(ops.alice, 'runs', 'list', '--json');
    expect((JSON.parse(json.stdout) as { rows: { id: string }[] }).rows.map((r) => r.id)).toContain(run0.runId);

    expect((await cli(ops.support, 'plan', 'approve', run0.runId)).code).toBe(1);
    const approved = await cli(ops.alice, 'plan', 'approve', run0.runId);
    expect(approved.code, approved.stderr).toBe(0);
    expect(await t.db.plan.findFirstOrThrow({ where: { runId: run0.runId } })).toMatchObject({ status: 'approved' });
    const again = await cli(ops.bob, 'plan', 'approve', run0.runId);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('refused: 409');
  });

  it('targets show, revoke, bump request and approve by a second operator (the requester is refused), unknowns resolve', async () => {
    const e = await makeEffect(t.db, 'done');
    const shown = await cli(ops.alice, 'targets', 'show', e.key, '--json');
    expect(JSON.parse(shown.stdout)).toMatchObject({ seen: { epoch: 1, state: 'done' } });

    const requested = await cli(ops.alice, 'bump', 'request', e.key, '--reason', 'resend after fix', '--json');
    expect(requested.code, requested.stderr).toBe(0);
    const { requestId } = JSON.parse(requested.stdout) as { requestId: string };
    const own = await cli(ops.alice, 'bump', 'approve', requestId);
    expect(own.code).toBe(1);
    expect(own.stderr).toContain('403');
    expect((await cli(ops.bob, 'bump', 'approve', requestId)).code).toBe(0);

    const r = await makeEffect(t.db, 'done');
    const revoked = await cli(ops.alice, 'revoke', r.key, '--reason', 'bounced');
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(await t.db.effectKey.findUniqueOrThrow({ where: { key: r.key } })).toMatchObject({ state: 'revoked' });

    const u = await makeEffect(t.db, 'unknown');
    const resolved = await cli(
      ops.support,
      'unknowns',
      'resolve',
      u.key,
      '--outcome',
      'not_sent',
      '--reason',
      'nothing in the log',
    );
    expect(resolved.code, resolved.stderr).toBe(0);
    expect((await cli(ops.support, 'unknowns', 'resolve', u.key, '--outcome', 'maybe', '--reason', 'x')).code).toBe(2);
  });

  it('replay request, approve by another operator, start, pause, cancel, and watch printing progress lines until it ends', async () => {
    const c = await makeCampaign(t.db, { failed: 2, done: 1 });
    const requested = await cli(
      ops.alice,
      'replay',
      'request',
      c.runId,
      '--count',
      '2',
      '--reason',
      'crashed run',
      '--json',
    );
    expect(requested.code, requested.stderr).toBe(0);
    const { replayId, approvalRequestId } = JSON.parse(requested.stdout) as {
      replayId: string;
      approvalRequestId: string;
    };
    expect((await cli(ops.alice, 'replay', 'approve', approvalRequestId)).code).toBe(1);
    expect((await cli(ops.bob, 'replay', 'approve', approvalRequestId)).code).toBe(0);
    for (const verb of ['start', 'pause']) expect((await cli(ops.alice, 'replay', verb, replayId)).code, verb).toBe(0);
    expect((await cli(ops.alice, 'replay', 'cancel', replayId, '--reason', 'enough')).code).toBe(0);
    const watched = await cli(ops.auditor, 'replay', 'watch', replayId, '--interval', '50');
    expect(watched.code).toBe(1); // cancelled: not a completed replay
    expect(watched.stdout).toMatch(new RegExp(`^replay ${replayId}: cancelled \\d+/2 sent=`));
  });

  it('audit export writes the trail, audit verify checks it offline (exit 0), and a changed copy fails (exit 1)', async () => {
    const file = path.join(scratch, 'trail.jsonl');
    const exported = await cli(ops.auditor, 'audit', 'export', '--out', file);
    expect(exported.code, exported.stderr).toBe(0);
    expect((await cli(ops.alice, 'audit', 'export', '--out', file + '.x')).code).toBe(1);
    const verified = await cli(ops.auditor, 'audit', 'verify', file);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^ok: \d+ entries/);
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[1] = lines[1]!.replace(/"reason":"[^"]*"|"actor_label":"[^"]*"/, (m) => m.replace(/":"/, '":"x'));
    writeFileSync(file, lines.join('\n'));
    const broken = await cli(ops.auditor, 'audit', 'verify', file);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain('BROKEN');
  });

  it("apply -f ledger.yaml: the dry run shows the diff (and a route's missing secret) and writes nothing, apply writes it (secrets to a file), again: no changes; a route named like the environment's is refused; a grant taken out is removed", async () => {
    const wf = `wf_${suffix()}`;
    const tool = `mail_${suffix()}`;
    const yaml = (grants: string) => `# the ${wf} team
tools:
  - name: ${tool}
    actions: [receipt]
    targetType: email
    provider: sandbox
    generatedInputs: [body]
runtimeKeys:
  - name: runner-${wf}
    workflows: [${wf}]
workflows:
  ${wf}:
    grants:
${grants}notificationRoutes:
  - name: chat-${wf}
    url: https://hooks.example.com/${wf}
    events: [approval.waiting]
    secretEnv: CLI_E2E_MISSING_SECRET
`;
    const file = path.join(scratch, 'ledger.yaml');
    writeFileSync(
      file,
      yaml(
        `      - { user: ${ops.alice.email}, role: operator }\n      - { user: ${ops.support.email}, role: support }\n`,
      ),
    );
    const dry = await cli(ops.admin, 'apply', '-f', file, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('would change (dry run, nothing written):');
    expect(dry.stdout).toContain(`+ tool ${tool}`);
    expect(dry.stdout).toContain(`+ grant support to ${ops.support.email} on ${wf}`);
    expect(dry.stdout).toContain(`+ notification route chat-${wf}\n`);
    expect(dry.stdout).toContain(`warning: route chat-${wf}: CLI_E2E_MISSING_SECRET is not set`);
    expect(await t.db.notificationRoute.count()).toBe(0);
    expect(await t.db.toolDefinition.count({ where: { name: tool } })).toBe(0);

    const secrets = path.join(scratch, 'secrets.json');
    const applied = await cli(ops.admin, 'apply', '-f', file, '--secrets-file', secrets);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).not.toContain('elk_');
    expect(JSON.parse(readFileSync(secrets, 'utf8'))[`runner-${wf}`]).toMatch(/^elk_/);
    expect(await t.db.roleGrant.count({ where: { workflow: wf } })).toBe(2);
    expect(await t.db.notificationRoute.count({ where: { name: `chat-${wf}` } })).toBe(1);

    const again = await cli(ops.admin, 'apply', '-f', file);
    expect(again.stdout).toMatch(
      /^no changes\nwarning: route chat-[\w-]+: CLI_E2E_MISSING_SECRET is not set.*\nsha256 [0-9a-f]{64}\n$/,
    );

    // A route named like the environment's is refused (exit 1) naming it; nothing is written.
    writeFileSync(file, readFileSync(file, 'utf8').replace(`name: chat-${wf}`, 'name: env-audit'));
    const clash = await cli(ops.admin, 'apply', '-f', file);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain('env-audit');
    expect(await t.db.notificationRoute.findMany({ select: { name: true } })).toEqual([{ name: `chat-${wf}` }]);

    writeFileSync(file, yaml(`      - { user: ${ops.alice.email}, role: operator }\n`));
    const removed = await cli(ops.admin, 'apply', '-f', file);
    expect(removed.stdout).toContain(`- grant support to ${ops.support.email} on ${wf}`);
    expect(await t.db.roleGrant.count({ where: { workflow: wf } })).toBe(1);
    expect((await cli(ops.alice, 'apply', '-f', file)).code).toBe(1);
    writeFileSync(file, 'tools: [unclosed');
    expect((await cli(ops.admin, 'apply', '-f', file)).code).toBe(2);
  });
});
