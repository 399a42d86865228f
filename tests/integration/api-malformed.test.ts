// At least 1,000 generated malformed bodies across every POST endpoint: only 4xx answers, each a JSON
// error naming the field, and no row of the ledger (or of the idempotency table) changes.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, snapshot } from '../helpers/factories.ts';
import { BASE, makeKey, post, routeFetch, useApiDb } from './api-support.ts';
import * as schemas from '@/lib/api/schemas.ts';
import type { z } from 'zod';
import { rng } from '@/scripts/proof/support/abuse-rng.ts'; // mulberry32: a failure reproduces from its seed

let t: TestDatabase;
let token: string;

const BAD_VALUES: unknown[] = [
  null,
  0,
  -1,
  1.5,
  true,
  false,
  [],
  {},
  [1, 2],
  { nested: 1 },
  '',
  '   ',
  'x'.repeat(5000),
  '\u0000\u0001',
  'not-a-uuid',
  '2026-13-45',
  Number.MAX_SAFE_INTEGER + 2,
];

interface Endpoint {
  path: string;
  valid: Record<string, unknown>;
  /** The body schema: a generated body the schema accepts is not malformed and is not sent. */
  schema: z.ZodType;
}

/** Whether a raw body is malformed at the door: not JSON, a NUL anywhere, or refused by the schema. */
function malformed(schema: z.ZodType, raw: string): boolean {
  if (raw.trim() === '') return !schema.safeParse({}).success;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return true;
  }
  return raw.includes('\\u0000') || !schema.safeParse(value).success;
}

beforeAll(async () => {
  t = await createTestDatabase();
  useApiDb(t.db);
  token = (await makeKey(t.db)).token;
});

describe('malformed bodies', () => {
  it('Z5, S7: 1,000+ generated malformed bodies on every POST get only 4xx JSON errors naming the field, and change no row', async () => {
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    // One real effect and attempt, so outcome/deletion/response bodies point at something.
    const w = await (
      await post(
        '/effects/claim',
        { runId: run.runId, tool: tool.name, action: 'campaign_welcome', recordId: 'r0', target: 'base@example.com' },
        { token },
      )
    ).json();
    const endpoints: Endpoint[] = [
      { path: '/runs', valid: { workflow: 'wf_fuzz', triggerId: 'evt_fuzz' }, schema: schemas.createRunBody },
      {
        path: `/runs/${run.runId}/plan`,
        valid: { items: [{ tool: tool.name, action: 'campaign_welcome', recordId: 'r1', target: 'p@example.com' }] },
        schema: schemas.submitPlanBody,
      },
      {
        path: '/effects/claim',
        valid: {
          runId: run.runId,
          tool: tool.name,
          action: 'campaign_welcome',
          recordId: 'r2',
          target: 'q@example.com',
        },
        schema: schemas.claimBody,
      },
      {
        path: '/effects/outcome',
        valid: { key: w.key, epoch: 1, attemptId: w.attemptId, outcome: 'done', receipt: 'msg' },
        schema: schemas.outcomeBody,
      },
      { path: '/effects/deletion', valid: { key: w.key, epoch: 1, objectId: 'obj-1' }, schema: schemas.deletionBody },
      {
        path: `/attempts/${w.attemptId}/response`,
        valid: { status: 200, headers: [], bodyBase64: '' },
        schema: schemas.attemptResponseBody,
      },
      { path: `/runs/${run.runId}/replay`, valid: {}, schema: schemas.replayBody },
    ];
    const random = rng(20261130);
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
    const all: { path: string; raw: string; label: string; semantic?: boolean }[] = [];
    const cases = all;
    for (const e of endpoints) {
      const fields = Object.keys(e.valid);
      for (const f of fields) {
        for (const v of BAD_VALUES)
          cases.push({
            path: e.path,
            raw: JSON.stringify({ ...e.valid, [f]: v }),
            label: `${f}=${JSON.stringify(v)?.slice(0, 20)}`,
          });
        const { [f]: _drop, ...rest } = e.valid;
        cases.push({ path: e.path, raw: JSON.stringify(rest), label: `missing ${f}` });
      }
      for (const extra of ['subject', 'body', 'key', '__proto__x', 'epoch2'])
        cases.push({ path: e.path, raw: JSON.stringify({ ...e.valid, [extra]: 'Welcome!' }), label: `extra ${extra}` });
      for (const raw of ['', 'null', '[]', '"text"', '42', '{', '{"a":', 'not json', '[{}]', 'true']) {
        cases.push({ path: e.path, raw, label: `raw ${raw}` });
      }
    }
    // Nested and random combinations until there are well over 1,000.
    const claim = endpoints[2]!.valid;
    const plan = endpoints[1]!.valid as { items: Record<string, unknown>[] };
    while (all.length < 1700) {
      const kind = random();
      if (kind < 0.3) {
        const field = pick(['tool', 'action', 'recordId', 'target']);
        cases.push({
          path: endpoints[1]!.path,
          raw: JSON.stringify({
            items: [
              {
                ...plan.items[0],
                [field]: pick(BAD_VALUES.filter((v) => typeof v !== 'string' || v.trim() === '' || v.length > 256)),
              },
            ],
          }),
          label: `plan item ${field}`,
        });
      } else if (kind < 0.55) {
        const target = pick([
          'no-at-sign',
          '@example.com',
          'a@',
          'a@@b.com',
          'a b@example.com',
          'anna@-bad-.com',
          'a@b',
          'x@example..com',
          '<a>@example.com',
        ]);
        cases.push({
          path: endpoints[2]!.path,
          raw: JSON.stringify({ ...claim, target, recordId: `fz-${cases.length}` }),
          label: `target ${target}`,
          semantic: true,
        });
      } else if (kind < 0.7) {
        cases.push({
          path: endpoints[2]!.path,
          raw: JSON.stringify({ ...claim, tool: `unregistered_${Math.floor(random() * 1e6)}` }),
          label: 'unknown tool',
          semantic: true,
        });
      } else if (kind < 0.8) {
        cases.push({
          path: endpoints[2]!.path,
          raw: JSON.stringify({ ...claim, action: `unregistered_${Math.floor(random() * 1e6)}` }),
          label: 'unknown action',
          semantic: true,
        });
      } else if (kind < 0.9) {
        cases.push({
          path: '/effects/outcome',
          raw: JSON.stringify({
            key: w.key,
            outcome: pick(['done', 'failed', 'stuck', 'maybe', 'revoked', 'pending']),
            ...(random() < 0.5 ? { evidence: pick(BAD_VALUES) } : {}),
            ...(random() < 0.5 ? { receipt: pick(BAD_VALUES) } : {}),
          }),
          label: 'outcome mix',
        });
      } else {
        cases.push({
          path: `/attempts/${w.attemptId}/response`,
          raw: JSON.stringify({
            status: pick([-1, 1000, 1.5, '200', null]),
            headers: pick([[['a']], 'x', [[1, 2]], null, {}]),
            bodyBase64: pick(['***', 5, null, 'a b']),
          }),
          label: 'raw response',
        });
      }
    }
    // Keep only what is really malformed (the schema refuses it) or semantically invalid (a target that
    // does not normalize, an unregistered tool or action): a generated body that is valid is not sent.
    const byPath = new Map(endpoints.map((e) => [e.path, e.schema]));
    const filtered = all.filter((c) => c.semantic || malformed(byPath.get(c.path)!, c.raw));
    cases.length = 0;
    cases.push(...filtered);
    expect(cases.length).toBeGreaterThanOrEqual(1000);

    const before = await snapshot(t.db);
    const idemBefore = await t.owner(`SELECT count(*)::int AS n FROM idempotency_record`);
    const failures: string[] = [];
    for (let i = 0; i < cases.length; i += 25) {
      const batch = cases.slice(i, i + 25);
      const results = await Promise.all(
        batch.map(async (c, j) => {
          const res = await post(c.path, undefined, { token, raw: c.raw, idempotencyKey: `fuzz-${i + j}` });
          const text = await res.text();
          let body: { code?: string; field?: string; detail?: string } | null;
          try {
            body = JSON.parse(text);
          } catch {
            body = null;
          }
          return { c, status: res.status, body };
        }),
      );
      for (const { c, status, body } of results) {
        const ok =
          status >= 400 &&
          status < 500 &&
          typeof body?.code === 'string' &&
          typeof body.detail === 'string' &&
          typeof body.field === 'string' &&
          body.field.length > 0;
        if (!ok) failures.push(`${c.path} [${c.label}] -> ${status} ${JSON.stringify(body)?.slice(0, 200)}`);
      }
    }
    expect(failures.slice(0, 20)).toEqual([]);
    expect(await snapshot(t.db)).toEqual(before);
    expect((await t.owner(`SELECT count(*)::int AS n FROM idempotency_record`)).rows[0]!.n).toBe(idemBefore.rows[0]!.n);
  });

  it('Z5: bodies nested 40 to 100,000 levels deep (as a property, inside a field, or whole), over the size limit, or not UTF-8 get 413 or 422 naming the body, every time, and change no row', async () => {
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    const before = await snapshot(t.db);
    const idemBefore = await t.owner(`SELECT count(*)::int AS n FROM idempotency_record`);
    const claim = {
      runId: run.runId,
      tool: tool.name,
      action: 'campaign_welcome',
      recordId: 'r',
      target: 'd@example.com',
    };
    const claimJson = JSON.stringify(claim).slice(0, -1);
    const bodies: { label: string; raw: string | Uint8Array; expect: number[] }[] = [];
    for (const depth of [40, 5_000, 20_000, 100_000]) {
      const deep = '['.repeat(depth) + ']'.repeat(depth);
      bodies.push({ label: `extra property ${depth}`, raw: `${claimJson},"extra":${deep}}`, expect: [413] });
      bodies.push({ label: `whole body ${depth}`, raw: deep, expect: [413] });
      bodies.push({ label: `string field ${depth}`, raw: JSON.stringify({ ...claim, target: deep }), expect: [422] });
    }
    bodies.push({ label: 'unclosed', raw: '{'.repeat(50_000), expect: [413] });
    bodies.push({ label: 'not UTF-8', raw: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), expect: [422] });
    const paths = [
      '/effects/claim',
      '/effects/outcome',
      `/runs/${run.runId}/replay`,
      `/runs/${run.runId}/plan`,
      '/runs',
    ];
    const failures: string[] = [];
    for (const path of paths) {
      for (const b of bodies) {
        for (const idempotencyKey of [undefined, `deep-${path}-${b.label}`]) {
          const res = await post(path, undefined, { token, idempotencyKey, raw: b.raw as string });
          const text = await res.text();
          let body: { code?: string; field?: string } | null;
          try {
            body = JSON.parse(text);
          } catch {
            body = null;
          }
          const expected = path === '/effects/claim' ? b.expect : [413, 422];
          if (!expected.includes(res.status) || (body?.field !== 'body' && !(res.status === 422 && body?.field)))
            failures.push(`${path} [${b.label}] -> ${res.status} ${text.slice(0, 160)}`);
        }
      }
    }
    const huge = await post('/effects/claim', undefined, {
      token,
      raw: JSON.stringify({ ...claim, pad: 'x'.repeat(65 * 1024 * 1024) }),
    });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ code: 'payload_too_large', field: 'body' });
    expect(failures).toEqual([]);
    expect(await snapshot(t.db)).toEqual(before);
    expect((await t.owner(`SELECT count(*)::int AS n FROM idempotency_record`)).rows[0]!.n).toBe(idemBefore.rows[0]!.n);
  });

  it('Z5: a body sent as a form, multipart or XML gets 415 naming content-type and changes no row; JSON types with parameters, +json types, text/plain (what fetch sends for a string body) and no Content-Type are read', async () => {
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    const claim = {
      runId: run.runId,
      tool: tool.name,
      action: 'campaign_welcome',
      recordId: 'r',
      target: 'ct@example.com',
    };
    const before = await snapshot(t.db);
    const idemBefore = await t.owner(`SELECT count(*)::int AS n FROM idempotency_record`);
    for (const type of [
      'application/x-www-form-urlencoded',
      'application/xml',
      'multipart/form-data; boundary=x',
      'application/jsonx',
    ]) {
      for (const idempotencyKey of [undefined, `ct-${type}`]) {
        const res = await post('/effects/claim', claim, { token, idempotencyKey, headers: { 'content-type': type } });
        expect(res.status, type).toBe(415);
        expect(await res.json()).toMatchObject({ code: 'unsupported_media_type', field: 'content-type' });
      }
    }
    expect(await snapshot(t.db)).toEqual(before);
    expect((await t.owner(`SELECT count(*)::int AS n FROM idempotency_record`)).rows[0]!.n).toBe(idemBefore.rows[0]!.n);

    const accepted = [
      'application/json; charset=utf-8',
      'Application/JSON',
      'application/vnd.effect-ledger+json',
      'text/plain;charset=UTF-8',
    ];
    for (const [i, type] of accepted.entries()) {
      const res = await post(
        '/effects/claim',
        { ...claim, recordId: `r${i}` },
        { token, headers: { 'content-type': type } },
      );
      expect(res.status, type).toBe(201);
    }
    const bare = await routeFetch(`${BASE}/api/v1/effects/claim`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: new Blob([JSON.stringify({ ...claim, recordId: 'bare' })]),
    });
    expect(bare.headers.get('content-type') ?? '').not.toMatch(/problem/);
    expect(bare.status).toBe(201);
  });
});
