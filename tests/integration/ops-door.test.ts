// Issue 17: failed runtime-key authentications are limited per source address. After the limit, the
// source gets 429 with Retry-After and a problem document, no key is checked and nothing more is
// audited; another source is unaffected. Real route modules and a real database.
import { beforeAll, describe, expect, it } from 'vitest';
import { DOOR_MAX_FAILURES } from '@/lib/ops/door-limiter.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

import { makeKey, post, useApiDb } from './api-support.ts';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 8 });
  useApiDb(t.db);
});

const auditedRefusals = async (ip: string) =>
  (
    await t.owner<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_entry WHERE outcome = 'refused' AND chain LIKE '%api:auth' AND ip = $1`,
      [ip],
    )
  ).rows[0]!.n;

describe('runtime-key failures per source', () => {
  it(`Z6: ${DOOR_MAX_FAILURES} failures from one address, then 429 with Retry-After and no more audit entries; another address still gets in`, async () => {
    const attacker = '203.0.113.77';
    const body = { workflow: 'wf', triggerId: 'evt-door' };
    const bad = { token: 'elk_notakey_xxxxxxxxxxxxxxxxxxxxxxxx', headers: { 'x-forwarded-for': attacker } };
    for (let i = 0; i < DOOR_MAX_FAILURES; i++) expect((await post('/runs', body, bad)).status).toBe(401);
    expect(await auditedRefusals(attacker)).toBe(DOOR_MAX_FAILURES);

    const limited = await post('/runs', body, bad);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('content-type')).toBe('application/problem+json');
    expect(await limited.json()).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(await auditedRefusals(attacker)).toBe(DOOR_MAX_FAILURES);

    // Even a good key waits from that address (the limit is on the source, checked before any query).
    const good = await makeKey(t.db, ['*']);
    const asAttacker = await post('/runs', body, { token: good.token, headers: { 'x-forwarded-for': attacker } });
    expect(asAttacker.status).toBe(429);
    const runsBefore = (await t.owner<{ n: number }>('SELECT count(*)::int AS n FROM run')).rows[0]!.n;
    const elsewhere = await post('/runs', body, { token: good.token, headers: { 'x-forwarded-for': '198.51.100.3' } });
    expect(elsewhere.status).toBe(201);
    expect((await t.owner<{ n: number }>('SELECT count(*)::int AS n FROM run')).rows[0]!.n).toBe(runsBefore + 1);
  });
});
