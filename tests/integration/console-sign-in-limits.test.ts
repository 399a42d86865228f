// Z4: the failed sign-in limit (5 per account, 20 per address in 15 minutes) holds when guesses arrive
// all at once, and also covers guesses of the current password on the password change page. What the
// credentials sign-in throws reaches the sign-in page, so it is only ever one of its own sentences.
import { beforeAll, describe, expect, it } from 'vitest';
import { asConsoleRequest } from '../helpers/console-request.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { suffix } from '../helpers/factories.ts';
import { resetEnvCache } from '@/lib/env.ts';

let t: TestDatabase;
let authorize: (input: Record<string, unknown>, req: unknown) => Promise<unknown>;
let session: typeof import('@/lib/auth/session.ts');
let request: typeof import('@/lib/auth/request.ts');
let account: typeof import('@/app/actions/account.ts');
let insertUser: typeof import('@/lib/auth/users.ts').insertUser;
const system = { kind: 'system' as const, id: 'test', label: 'test setup' };
const WRONG = 'Email or password is not right.';
const ACCOUNT_LIMITED = 'Too many failed sign-ins for this account';
const ADDRESS_LIMITED = 'Too many failed sign-ins from this address';

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 10 });
  process.env.DATABASE_URL = t.appUrl;
  process.env.NEXTAUTH_SECRET = 'console-sign-in-limits-test-secret';
  resetEnvCache();
  const provider = (await import('@/lib/auth/options.ts')).authOptions().providers[0] as unknown as {
    options: { authorize: typeof authorize };
  };
  authorize = provider.options.authorize;
  session = await import('@/lib/auth/session.ts');
  request = await import('@/lib/auth/request.ts');
  account = await import('@/app/actions/account.ts');
  insertUser = (await import('@/lib/auth/users.ts')).insertUser;
});

const attempt = (email: unknown, password: unknown, ip: string) =>
  authorize({ email, password }, { headers: { 'x-forwarded-for': ip, 'user-agent': 'vitest' } });

/** Each attempt's outcome: the refusal's text, or "signed in". */
async function outcomes(attempts: Promise<unknown>[]): Promise<string[]> {
  const settled = await Promise.allSettled(attempts);
  return settled.map((s) => (s.status === 'fulfilled' ? 'signed in' : (s.reason as Error).message));
}

const tally = (messages: string[], start: string) => messages.filter((m) => m.startsWith(start)).length;

async function newPerson(password = 'the-right-password') {
  const email = `limit-${suffix()}@example.com`;
  const user = await insertUser(t.db, { email, name: 'Limit', role: 'auditor', password }, system);
  return { id: user.id, email, sessionVersion: user.sessionVersion, password };
}

describe('Z4: the failed sign-in limit under guesses at once', () => {
  it('Z4: twenty wrong passwords at once for one account: five are checked, fifteen refused as rate limited', async () => {
    const person = await newPerson();
    const results = await outcomes(
      Array.from({ length: 20 }, () => attempt(person.email, 'a-wrong-guess', '198.51.100.20')),
    );
    expect(tally(results, WRONG)).toBe(5);
    expect(tally(results, ACCOUNT_LIMITED)).toBe(15);
    expect(await t.db.signInFailure.count({ where: { email: person.email } })).toBe(5);
    // The right password from elsewhere waits out the window like any other guess.
    await expect(attempt(person.email, person.password, '198.51.100.21')).rejects.toThrow(ACCOUNT_LIMITED);
    const refused = await t.db.auditEntry.findMany({
      where: { action: 'auth.sign_in', outcome: 'refused', chain: `refused:auth:${person.email}` },
    });
    expect(refused.map((e) => (e.detail as { why: string }).why).sort()).toEqual([
      ...Array<string>(5).fill('bad credentials'),
      ...Array<string>(16).fill('rate limited'),
    ]);
  });

  it('Z4: twenty-five wrong guesses at once from one address across accounts: twenty are checked', async () => {
    const ip = '198.51.100.30';
    const results = await outcomes(
      Array.from({ length: 25 }, (_, i) => attempt(`nobody-${i}-${suffix()}@example.com`, 'a-wrong-guess', ip)),
    );
    expect(tally(results, WRONG)).toBe(20);
    expect(tally(results, ADDRESS_LIMITED)).toBe(5);
    expect(await t.db.signInFailure.count({ where: { ip } })).toBe(20);
  });

  it('Z4: a right password clears the account failures it follows', async () => {
    const person = await newPerson();
    for (let i = 0; i < 4; i++) await expect(attempt(person.email, 'wrong', '198.51.100.40')).rejects.toThrow(WRONG);
    await expect(attempt(person.email, person.password, '198.51.100.40')).resolves.toMatchObject({ id: person.id });
    expect(await t.db.signInFailure.count({ where: { email: person.email } })).toBe(0);
  });
});

describe('Z4: guesses of the current password on the password change', () => {
  it('Z4: wrong current passwords count toward the account limit, each refusal is audited, and the limit then refuses the right one', async () => {
    const person = await newPerson();
    const cookie = `next-auth.session-token=${await session.mintSessionToken(person)}`;
    const change = (currentPassword: string) =>
      asConsoleRequest(
        request.runWithRequest,
        cookie,
        () =>
          account.changePasswordAction({
            currentPassword,
            newPassword: 'a-brand-new-password',
            confirmPassword: 'a-brand-new-password',
          }),
        '198.51.100.50',
      );
    for (let i = 0; i < 5; i++)
      expect(await change(`guess-${i}`)).toMatchObject({ ok: false, code: 'validation', field: 'currentPassword' });
    expect(await change(person.password)).toMatchObject({ ok: false, code: 'rate_limited', field: 'currentPassword' });
    const row = await t.db.user.findUniqueOrThrow({ where: { id: person.id } });
    expect(row.sessionVersion).toBe(person.sessionVersion);
    await expect(attempt(person.email, person.password, '198.51.100.51')).rejects.toThrow(ACCOUNT_LIMITED);
    const refused = await t.db.auditEntry.findMany({
      where: { action: 'user.password_change', outcome: 'refused', subjectId: person.id },
      orderBy: { id: 'asc' },
    });
    expect(refused.map((e) => [e.chain, e.actorId, (e.detail as { why: string }).why])).toEqual([
      ...Array.from({ length: 5 }, () => [`refused:user:${person.id}`, person.id, 'the current password is not right']),
      [`refused:user:${person.id}`, person.id, 'rate limited'],
    ]);
    expect(await t.db.auditEntry.count({ where: { action: 'user.password_change', outcome: 'ok' } })).toBe(0);
  });
});

describe('what a refused sign-in says', () => {
  it('an email over 254 characters is answered like wrong credentials and writes nothing', async () => {
    const email = `${'a'.repeat(250)}@example.com`;
    await expect(attempt(email, 'whatever-password', '198.51.100.60')).rejects.toThrow(WRONG);
    expect(await t.db.signInFailure.count({ where: { ip: '198.51.100.60' } })).toBe(0);
    expect(await t.db.auditEntry.count({ where: { chain: { contains: email } } })).toBe(0);
  });

  it('an unexpected error is answered with one plain sentence, not its own text', async () => {
    // An email that cannot even be turned into text stands for any failure the sign-in did not foresee.
    const failure = attempt(Object.create(null), 'whatever-password', '198.51.100.61');
    await expect(failure).rejects.toThrow('Sign-in could not be completed right now. Try again in a moment.');
  });
});
