import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool } from '../helpers/factories.ts';
import { get, makeKey, post, routeFetch, BASE, useApiDb } from './api-support.ts';

let t: TestDatabase;
let token: string;

beforeAll(async () => {
  t = await createTestDatabase();
  useApiDb(t.db);
  token = (await makeKey(t.db)).token;
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document walked generically
type Json = Record<string, any>;

function routeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? routeFiles(full) : name === 'route.ts' ? [full] : [];
  });
}

function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refs(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

describe('OpenAPI document', () => {
  it('GET /api/v1/openapi.json is an OpenAPI 3.1 document generated from the zod schemas: every $ref resolves, every schema compiles as JSON Schema 2020-12, every route is documented', async () => {
    const res = await get('/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Json;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBeTruthy();
    expect(doc.info.license.name).toBeTruthy();
    expect(doc.components.securitySchemes.runtimeKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const ref of refs(doc)) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas[ref.split('/').pop()!], ref).toBeDefined();
    }
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    for (const [name, schema] of Object.entries(doc.components.schemas as Json))
      ajv.addSchema(schema as object, `#/components/schemas/${name}`);
    for (const name of Object.keys(doc.components.schemas))
      expect(() => ajv.getSchema(`#/components/schemas/${name}`), name).not.toThrow();
    const operationIds = new Set<string>();
    for (const [p, methods] of Object.entries(doc.paths as Json)) {
      expect(p.startsWith('/')).toBe(true);
      for (const [method, op] of Object.entries(methods as Json)) {
        expect(['get', 'post']).toContain(method);
        expect(op.operationId).toBeTruthy();
        expect(operationIds.has(op.operationId)).toBe(false);
        operationIds.add(op.operationId);
        expect(Object.keys(op.responses).length).toBeGreaterThan(0);
        for (const [status, r] of Object.entries(op.responses as Json)) {
          expect(status).toMatch(/^[1-5]\d\d$/);
          expect((r as Json).description).toBeTruthy();
          // Every error answer is a problem document, and only that.
          if (Number(status) >= 400)
            expect(Object.keys((r as Json).content), `${p} ${status}`).toEqual(['application/problem+json']);
        }
        expect(op.tags?.length, op.operationId).toBe(1);
        expect(doc.tags.map((tag: Json) => tag.name)).toContain(op.tags[0]);
        for (const status of ['429', '503']) expect(op.responses[status].headers['Retry-After'], status).toBeDefined();
        expect(op.responses['500']).toBeDefined();
        if (method === 'post') expect(op.responses['413']).toBeDefined();
        const declared = [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
        const params = (op.parameters ?? []).filter((x: Json) => x.in === 'path').map((x: Json) => x.name);
        expect(params.sort()).toEqual(declared.sort());
        // A management decision is not replayed by key: the version it names refuses a second one (Z8).
        if (method === 'post' && !p.startsWith('/manage/'))
          expect(op.parameters.some((x: Json) => x.name === 'Idempotency-Key')).toBe(true);
      }
    }
    const root = path.resolve('app/api/v1');
    const documented = new Set(Object.keys(doc.paths).map((p) => p.replace(/\{(\w+)\}/g, '[$1]')));
    for (const file of routeFiles(root)) {
      const route = `/${path.relative(root, path.dirname(file)).split(path.sep).join('/')}`;
      if (route === '/openapi.json' || route === '/docs') continue;
      // The management API's catch-all: its operations (lib/manage/endpoints.ts) are each documented.
      if (route === '/manage/[...path]') {
        expect([...documented].filter((p) => p.startsWith('/manage/')).length).toBeGreaterThan(20);
        continue;
      }
      expect(documented.has(route), route).toBe(true);
    }
  });

  it('the claim response schemas of the document validate real API answers (201 winner, 200 loser) and refuse extra fields', async () => {
    const doc = (await (await get('/openapi.json')).json()) as Json;
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    for (const [name, schema] of Object.entries(doc.components.schemas as Json))
      ajv.addSchema(schema as object, `#/components/schemas/${name}`);
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    const body = {
      runId: run.runId,
      tool: tool.name,
      action: 'campaign_welcome',
      recordId: 'r',
      target: 'anna@example.com',
    };
    const won = await (await post('/effects/claim', body, { token })).json();
    const lost = await (await post('/effects/claim', body, { token })).json();
    expect(ajv.validate('#/components/schemas/ClaimWon', won), JSON.stringify(ajv.errors)).toBe(true);
    expect(ajv.validate('#/components/schemas/ClaimLost', lost), JSON.stringify(ajv.errors)).toBe(true);
    expect(ajv.validate('#/components/schemas/ClaimRequest', body)).toBe(true);
    expect(ajv.validate('#/components/schemas/ClaimRequest', { ...body, subject: 'hi' })).toBe(false);
    const view = await (await get(`/runs/${run.runId}`, token)).json();
    expect(ajv.validate('#/components/schemas/RunView', view), JSON.stringify(ajv.errors)).toBe(true);
  });

  it('GET /api/v1/docs serves a readable HTML reference of every operation', async () => {
    const res = await routeFetch(`${BASE}/api/v1/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    for (const p of [
      '/effects/claim',
      '/runs/{runId}/replay',
      '/effects/outcome',
      '/effects/deletion',
      '/attempts/{attemptId}/response',
      '/runs/{runId}/plan',
    ])
      expect(html).toContain(`/api/v1${p}`);
    expect(html).not.toContain('undefined');
  });
});
