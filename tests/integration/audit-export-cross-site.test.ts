// Z2, A4: the audit export writes an audit.export entry, so another site may not make a signed-in
// browser fetch it: a cross-site request is refused (403) and audited as refused, and no export entry
// is written. The same request from the console itself exports as before.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { suffix } from '../helpers/factories.ts';
import { resetEnvCache } from '@/lib/env.ts';

let t: TestDatabase;
let route: typeof import('@/app/api/console/audit/export/route.ts');
let cookie: string;
let auditorId: string;
const system = { kind: 'system' as const, id: 'test', label: 'test setup' };

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 });
  process.env.DATABASE_URL = t.appUrl;
  process.env.NEXTAUTH_SECRET = 'audit-export-cross-site-test-secret';
  resetEnvCache();
  const { insertUser } = await import('@/lib/auth/users.ts');
  const { mintSessionToken } = await import('@/lib/auth/session.ts');
  const email = `auditor-${suffix()}@example.com`;
  const u = await insertUser(t.db, { email, name: 'A', role: 'auditor', password: 'a-long-enough-password' }, system);
  auditorId = u.id;
  cookie = `next-auth.session-token=${await mintSessionToken({ id: u.id, email, sessionVersion: u.sessionVersion })}`;
  route = await import('@/app/api/console/audit/export/route.ts');
});

function exportWith(headers: Record<string, string>) {
  const h = new Headers({ host: 'console.test', cookie, ...headers });
  return route.GET(new Request('http://console.test/api/console/audit/export?format=csv', { headers: h }), undefined);
}

const exportEntries = (outcome: 'ok' | 'refused') =>
  t.db.auditEntry.findMany({ where: { action: 'audit.export', outcome, actorId: auditorId } });

describe('Z2: the audit export and cross-site requests', () => {
  it('Z2: a cross-site export is refused with 403, audited as refused, and writes no export entry', async () => {
    const crossSite: Record<string, string>[] = [
      { 'sec-fetch-site': 'cross-site' },
      { origin: 'https://evil.example' },
    ];
    for (const headers of crossSite) {
      const res = await exportWith(headers);
      expect(res.status).toBe(403);
      expect((await res.json()).detail).toContain('cross-site request refused');
    }
    expect(await exportEntries('ok')).toHaveLength(0);
    const refused = await exportEntries('refused');
    expect(refused.map((e) => [e.chain, (e.detail as { why: string }).why])).toEqual([
      ['refused:audit:export', 'cross-site request refused'],
      ['refused:audit:export', 'cross-site request refused (origin https://evil.example)'],
    ]);

    const same = await exportWith({ 'sec-fetch-site': 'same-origin' });
    expect(same.status).toBe(200);
    await same.text();
    expect(await exportEntries('ok')).toHaveLength(1);
  });
});
