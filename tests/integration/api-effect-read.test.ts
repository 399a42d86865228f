// GET /api/v1/effects/{key}: one effect's state, epoch, receipt and stored raw response, for the key's
// own workflow only (Z6); absent keys are a 404 problem document; the SDK reads it over HTTP and in process.
import { beforeAll, describe, expect, it } from 'vitest';
import { directTransport } from '@/lib/api/direct-transport.ts';
import { createLedger, httpTransport, LedgerApiError } from '@/lib/sdk/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, runtimeActor } from '../helpers/factories.ts';
import { BASE, get, makeKey, post, routeFetch, useApiDb } from './api-support.ts';

let t: TestDatabase;
let token: string;
let toolName: string;
let workflow: string;

beforeAll(async () => {
  t = await createTestDatabase();
  useApiDb(t.db);
  toolName = (await makeTool(t.db)).name;
  workflow = `wf_read_${Date.now()}`;
  token = (await makeKey(t.db, [workflow])).token;
});

async function claim(target: string, wf = workflow) {
  const run = await makeRun(t.db, wf);
  const res = await post(
    '/effects/claim',
    { runId: run.runId, tool: toolName, action: 'campaign_welcome', recordId: 'r-1', target },
    { token: wf === workflow ? token : (await makeKey(t.db, [wf])).token },
  );
  expect(res.status).toBe(201);
  return { runId: run.runId, ...((await res.json()) as { key: string; epoch: number; attemptId: string }) };
}

const path = (key: string) => `/effects/${encodeURIComponent(key)}`;

describe('GET /api/v1/effects/{key}', () => {
  it('S1 R1: a pending effect, then the same effect done: state, epoch, receipt and the raw response bytes', async () => {
    const c = await claim('ada@example.com');
    const pending = await get(path(c.key), token);
    expect(pending.status).toBe(200);
    expect(await pending.json()).toMatchObject({
      key: c.key,
      runId: c.runId,
      epoch: 1,
      state: 'pending',
      receipt: null,
      response: null,
      awaitingClaim: false,
      target: 'ada@example.com',
    });
    const body = '{"id":"msg_7","status":"delivered"}';
    const report = await post(
      '/effects/outcome',
      {
        key: c.key,
        epoch: c.epoch,
        attemptId: c.attemptId,
        outcome: 'done',
        receipt: 'msg_7',
        response: {
          status: 201,
          headers: [['content-type', 'application/json']],
          bodyBase64: Buffer.from(body).toString('base64'),
        },
      },
      { token },
    );
    expect(report.status).toBe(200);
    const done = await get(path(c.key), token);
    const view = (await done.json()) as {
      state: string;
      receipt: string;
      response: { status: number; bodyBase64: string };
    };
    expect(view).toMatchObject({ state: 'done', receipt: 'msg_7', epoch: 1 });
    expect(view.response.status).toBe(201);
    expect(Buffer.from(view.response.bodyBase64, 'base64').toString('utf8')).toBe(body);
  });

  it('Z6: an absent key is a 404 problem document naming it; a key of another workflow is a 403; no key is a 401', async () => {
    const missing = await get(path('v1/evt_none/tool/action/rec/email/nobody%40example.com'), token);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
    expect(await missing.json()).toMatchObject({ code: 'not_found', status: 404 });

    const other = await claim('bo@example.com', `wf_other_${Date.now()}`);
    const refused = await get(path(other.key), token);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: 'forbidden' });

    const anonymous = await get(path(other.key));
    expect(anonymous.status).toBe(401);
  });

  it('the SDK reads an effect over HTTP and in process with the same shape; an absent key throws not_found', async () => {
    const c = await claim('cy@example.com');
    const overHttp = createLedger(httpTransport({ baseUrl: BASE, runtimeKey: token, fetch: routeFetch, retries: 0 }));
    const inProcess = createLedger(directTransport({ db: t.db, actor: runtimeActor([workflow]) }));
    const a = await overHttp.readEffect(c.key);
    const b = await inProcess.readEffect(c.key);
    expect(a).toEqual(b);
    expect(a).toMatchObject({ key: c.key, state: 'pending', epoch: 1 });
    const error = await overHttp.readEffect(`${c.key}x`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgerApiError);
    expect((error as LedgerApiError).code).toBe('not_found');
  });
});
