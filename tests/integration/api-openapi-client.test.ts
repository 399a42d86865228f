// The OpenAPI document is good enough to generate a client from: openapi-typescript turns the served
// /api/v1/openapi.json into types, openapi-fetch uses them, tsc checks both (no hand edits), and the
// client creates a run, submits a plan and claims an effect against the API served over HTTP.
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer } from '@/scripts/bench/sdk-http-server.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeTool } from '../helpers/factories.ts';
import { makeKey } from './api-support.ts';

let t: TestDatabase;
let api: { url: string; stop(): Promise<void> };
let scratch: string;

beforeAll(async () => {
  t = await createTestDatabase();
  api = await startApiServer(t.appUrl, 2);
  scratch = mkdtempSync(path.join(tmpdir(), 'effect-ledger-openapi-'));
  // The generated client resolves openapi-fetch the way a project that installed it would.
  symlinkSync(path.resolve('node_modules'), path.join(scratch, 'node_modules'), 'dir');
});
afterAll(async () => {
  await api?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

// What a team would write against the generated types. The @ts-expect-error lines prove the types
// are strict: tsc fails if a wrong request compiles.
const USAGE = `import createClient from 'openapi-fetch';
import type { components, paths } from './schema.ts';

export async function exercise(baseUrl: string, token: string, tool: string, triggerId: string) {
  const client = createClient<paths>({ baseUrl: baseUrl + '/api/v1', headers: { authorization: 'Bearer ' + token } });
  const created = await client.POST('/runs', { body: { workflow: 'wf', triggerId } });
  if (!created.data) throw new Error('createRun: ' + created.error.detail);
  const runId: string = created.data.runId;
  const item = { tool, action: 'campaign_welcome', recordId: 'rec-1', target: 'Generated@Example.com' };
  const plan = await client.POST('/runs/{runId}/plan', {
    params: { path: { runId }, header: { 'Idempotency-Key': 'plan-' + triggerId } },
    body: { items: [item] },
  });
  const claim = await client.POST('/effects/claim', { body: { runId, ...item } });
  const again = await client.POST('/effects/claim', { body: { runId, ...item } });
  const refused = await client.POST('/runs', { body: { workflow: '', triggerId } });
  const code: string | undefined = refused.error?.code;
  const field: string | undefined = refused.error?.field;
  // @ts-expect-error the claim request has no place for generated text (K1)
  const withText: components['schemas']['ClaimRequest'] = { runId, ...item, subject: 'Hi' };
  void withText;
  // @ts-expect-error a run needs its trigger
  void client.POST('/runs', { body: { workflow: 'wf' } });
  return {
    runId,
    plan: plan.data && { itemCount: plan.data.itemCount, status: plan.data.status },
    claim: claim.data && claim.data.claimed ? { key: claim.data.key, idempotencyKey: claim.data.idempotencyKey } : null,
    again: again.data && !again.data.claimed ? { key: again.data.key, state: again.data.state } : null,
    refused: { status: refused.response.status, code, field },
  };
}
`;

describe('a client generated from the OpenAPI document', () => {
  it('Z5, S1: openapi-typescript + openapi-fetch, type-checked with no hand edits, create a run, submit a plan and claim an effect', async () => {
    const token = (await makeKey(t.db)).token;
    const tool = (await makeTool(t.db)).name;
    const doc = (await (await fetch(`${api.url}/api/v1/openapi.json`)).json()) as Parameters<typeof openapiTS>[0];
    writeFileSync(path.join(scratch, 'schema.ts'), astToString(await openapiTS(doc)));
    writeFileSync(path.join(scratch, 'usage.ts'), USAGE);

    const program = ts.createProgram([path.join(scratch, 'usage.ts')], {
      strict: true,
      noEmit: true,
      noUncheckedIndexedAccess: true,
      allowImportingTsExtensions: true,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: true,
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(problems).toEqual([]);

    const usage = (await import(pathToFileURL(path.join(scratch, 'usage.ts')).href)) as {
      exercise: (baseUrl: string, token: string, tool: string, triggerId: string) => Promise<Record<string, unknown>>;
    };
    const result = await usage.exercise(api.url, token, tool, `evt-openapi-${Date.now()}`);
    expect(result).toMatchObject({
      plan: { itemCount: 1, status: 'submitted' },
      claim: {
        key: expect.stringContaining('generated%40example.com'),
        idempotencyKey: expect.stringMatching(/^el1-/),
      },
      again: { state: 'pending' },
      refused: { status: 422, code: 'validation', field: 'workflow' },
    });
    expect((result.again as { key: string }).key).toBe((result.claim as { key: string }).key);
    const effects = await t.db.effect.findMany({ where: { runId: result.runId as string } });
    expect(effects.map((e) => e.state)).toEqual(['pending']);
    expect(await t.db.plan.count({ where: { runId: result.runId as string } })).toBe(1);
  });

  it("the document's info.license is the project's", async () => {
    const doc = (await (await fetch(`${api.url}/api/v1/openapi.json`)).json()) as {
      info: { license: { name: string } };
    };
    const root = JSON.parse(readFileSync('package.json', 'utf8')) as { license: string };
    expect(doc.info.license.name).toBe(root.license);
  });
});
