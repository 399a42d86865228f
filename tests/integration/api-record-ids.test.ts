// K1, K3 over HTTP: a record id gets the input rules of a target. A format character is refused
// (422 naming recordId, nothing written), in a claim and in a plan alike; surrounding whitespace and
// another Unicode form of the same id are the same key, stored as keyed.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, snapshot } from '../helpers/factories.ts';
import { makeKey, post, useApiDb } from './api-support.ts';

let t: TestDatabase;
let token: string;
let toolName: string;

beforeAll(async () => {
  t = await createTestDatabase();
  useApiDb(t.db);
  token = (await makeKey(t.db)).token;
  toolName = (await makeTool(t.db)).name;
});

const claim = (runId: string, recordId: string) => ({
  runId,
  tool: toolName,
  action: 'campaign_welcome',
  recordId,
  target: 'mara@example.com',
});

describe('record ids (K1, K3)', () => {
  it('K3: a claim or a plan item whose record id holds a format character (U+200B, U+FEFF) is 422 naming recordId and writes nothing', async () => {
    const run = await makeRun(t.db);
    const before = await snapshot(t.db);
    for (const recordId of ['cust-\u200b0301', '\ufeffcust-0301', 'cust-0301\u2060']) {
      const res = await post('/effects/claim', claim(run.runId, recordId), { token });
      expect(res.status).toBe(422);
      const body = await res.json();
      expect(body).toMatchObject({ code: 'validation', field: 'recordId' });
      expect(body.detail).toContain('invisible format character');
    }
    const plan = await post(
      `/runs/${run.runId}/plan`,
      {
        items: [
          { tool: toolName, action: 'campaign_welcome', recordId: 'cust-\u200b0301', target: 'mara@example.com' },
        ],
      },
      { token },
    );
    expect(plan.status).toBe(422);
    expect(await plan.json()).toMatchObject({ code: 'validation', field: 'items.0.recordId' });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('K3: surrounding whitespace and the decomposed form of a record id are the same key as the id itself; the id is stored as keyed', async () => {
    const run = await makeRun(t.db);
    const won = await post('/effects/claim', claim(run.runId, ' cust-caf\u00e9 '), { token });
    expect(won.status).toBe(201);
    const w = await won.json();
    expect(w.key).toContain('/cust-caf%C3%A9/');
    for (const spelling of ['cust-caf\u00e9', '\tcust-cafe\u0301']) {
      const again = await post('/effects/claim', claim(run.runId, spelling), { token });
      expect(again.status).toBe(200);
      expect(await again.json()).toMatchObject({ claimed: false, key: w.key });
    }
    const stored = await t.db.effectKey.findUniqueOrThrow({ where: { key: w.key } });
    expect(stored.recordId).toBe('cust-caf\u00e9');
    // Case is the tool's business: the server keys ids as spelled (a tool declaring its ids
    // case-insensitive has the SDK fold them before they are sent).
    const upper = await post('/effects/claim', claim(run.runId, 'CUST-CAF\u00c9'), { token });
    expect(upper.status).toBe(201);
  });
});
