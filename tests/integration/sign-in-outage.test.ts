// A console sign-in while the database cannot serve is never told "wrong password": through PgBouncer
// (the shipped deploy/pgbouncer.ini), with PostgreSQL stopped and with PostgreSQL frozen (connections
// open, nothing answers), the credentials check refuses within 10 s with the sentence saying the
// database is unreachable (the route turns that refusal into 503 with Retry-After, sign-in-errors.test.ts),
// and the same person signs in once the database is back, without a restart.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resetEnvCache } from '@/lib/env.ts';
import { CREDENTIALS_MESSAGES } from '@/lib/auth/sign-in-errors.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { suffix } from '../helpers/factories.ts';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.ts';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';

const t = await createTestDatabase({ poolSize: 2 });
let proxy: FaultProxy;
let bouncer: PgBouncer;
let authorize: (input: Record<string, unknown>, req: unknown) => Promise<unknown>;
const email = `outage-${suffix()}@example.com`;
const password = 'the-right-password';

beforeAll(async () => {
  const server = new URL(inject('ownerUrl'));
  proxy = await startFaultProxy({ host: server.hostname, port: Number(server.port) });
  bouncer = await startPgBouncer(
    { host: '127.0.0.1', port: proxy.port },
    { [inject('appUser')]: inject('appPassword') },
  );
  const { insertUser } = await import('@/lib/auth/users.ts');
  await insertUser(
    t.db,
    { email, name: 'Outage', role: 'auditor', password },
    { kind: 'system', id: 'test', label: 'test' },
  );
  process.env.DATABASE_URL = bouncer.through(t.appUrl);
  process.env.NEXTAUTH_SECRET = 'sign-in-outage-test-secret';
  resetEnvCache();
  const provider = (await import('@/lib/auth/options.ts')).authOptions().providers[0] as unknown as {
    options: { authorize: typeof authorize };
  };
  authorize = provider.options.authorize;
});

afterAll(async () => {
  await (await import('@/lib/db/client.ts')).db().$disconnect();
  await bouncer?.stop();
  await proxy?.close();
});

/** The refusal's sentence (or "signed in") and how long it took. */
async function signIn(): Promise<{ outcome: string; ms: number }> {
  const started = performance.now();
  const outcome = await authorize({ email, password }, { headers: { 'x-forwarded-for': '198.51.100.9' } }).then(
    () => 'signed in',
    (error: Error) => error.message,
  );
  return { outcome, ms: performance.now() - started };
}

describe('sign-in during a database outage', () => {
  it('signs in while the database serves', async () => {
    expect((await signIn()).outcome).toBe('signed in');
  });

  it.each(['down', 'frozen'] as const)(
    'PostgreSQL %s: "the database is unreachable" within 10 s, never "wrong password"; back afterwards',
    { timeout: 60_000 },
    async (mode) => {
      proxy.set(mode);
      try {
        const during = await Promise.all([signIn(), signIn(), signIn()]);
        for (const d of during) {
          expect(d.outcome).toBe(CREDENTIALS_MESSAGES.databaseUnreachable);
          expect(d.ms).toBeLessThan(10_000);
        }
      } finally {
        proxy.set('open');
      }
      let after = await signIn();
      const until = Date.now() + 20_000;
      while (after.outcome !== 'signed in' && Date.now() < until) after = await signIn();
      expect(after.outcome).toBe('signed in');
    },
  );
});
