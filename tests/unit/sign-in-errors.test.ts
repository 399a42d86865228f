// The sign-in page shows only texts the console knows, whatever a link puts in ?error= or ?reason=,
// and the credentials check leaves with one of its own sentences or a plain one.
import type { Logger } from 'pino';
import { logger } from '@/lib/ops/log.ts';
import { describe, expect, it, vi } from 'vitest';
import { CREDENTIALS_MESSAGES, publicSignInError, signInNotice, unavailableSignIn } from '@/lib/auth/sign-in-errors.ts';

describe('the sign-in page notice', () => {
  it('shows nothing for an ?error= text the console did not write', () => {
    const forged = 'Your account is locked. Call +1 555 0100 to unlock it.';
    expect(signInNotice({ error: forged })).toBe('');
    expect(signInNotice({ reason: forged })).toBe('');
    expect(signInNotice({ error: '<b>hello</b>' })).toBe('');
    expect(signInNotice({ error: 'toString' })).toBe('');
    expect(signInNotice({ error: ['sso_unknown', 'x'] })).toBe('');
    expect(signInNotice({})).toBe('');
  });

  it('shows the text of a known code or sentence', () => {
    expect(signInNotice({ reason: 'disabled' })).toBe('This account is disabled. Ask an admin.');
    expect(signInNotice({ error: 'sso_unknown' })).toContain('Ask an admin for access');
    expect(signInNotice({ error: 'OAuthCallback' })).toContain('Single sign-on did not complete');
    expect(signInNotice({ error: CREDENTIALS_MESSAGES.account })).toBe(CREDENTIALS_MESSAGES.account);
    // next-auth's bare refusal: the form already says the credentials were not right.
    expect(signInNotice({ error: 'CredentialsSignin' })).toBe('');
    // The reason the console chose comes first.
    expect(signInNotice({ reason: 'signed_out', error: 'sso_unknown' })).toBe('You are signed out.');
  });
});

describe('what the credentials check leaves with', () => {
  it("passes the check's own sentences and turns anything else into the plain one", () => {
    // The unforeseen error goes to the structured log (one JSON line, lib/ops/log.ts), not to the page.
    const logged = vi.fn();
    const child = vi
      .spyOn(logger(), 'child')
      .mockReturnValue({ error: logged } as unknown as ReturnType<Logger['child']>);
    try {
      const own = new Error(CREDENTIALS_MESSAGES.wrong);
      expect(publicSignInError(own)).toBe(own);
      expect(publicSignInError(new Error(CREDENTIALS_MESSAGES.address)).message).toBe(CREDENTIALS_MESSAGES.address);
      expect(logged).not.toHaveBeenCalled();
      const internal = new Error('Invalid `prisma.user.findUnique()` invocation: connection refused');
      expect(publicSignInError(internal).message).toBe(CREDENTIALS_MESSAGES.unavailable);
      expect(publicSignInError('a string').message).toBe(CREDENTIALS_MESSAGES.unavailable);
      expect(logged).toHaveBeenCalledTimes(2);
    } finally {
      child.mockRestore();
    }
  });
});

describe('a sign-in while the database cannot serve', () => {
  const refused = (error: string, status = 401) =>
    new Response(JSON.stringify({ url: `http://console.test/api/auth/error?error=${encodeURIComponent(error)}` }), {
      status,
      headers: { 'content-type': 'application/json' },
    });

  it('says the database is unreachable, never "wrong password"', () => {
    const refusedConnection = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6432'), { code: 'ECONNREFUSED' });
    const wrapped = new Error('Invalid `prisma.user.findUnique()` invocation', { cause: refusedConnection });
    const message = publicSignInError(wrapped).message;
    expect(message).toBe(CREDENTIALS_MESSAGES.databaseUnreachable);
    expect(message).not.toBe(CREDENTIALS_MESSAGES.wrong);
    expect(signInNotice({ error: message })).toBe(message);
  });

  it("turns next-auth's 401 for that refusal into 503 with Retry-After, and leaves other answers alone", async () => {
    const unavailable = await unavailableSignIn(refused(CREDENTIALS_MESSAGES.databaseUnreachable));
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await unavailable.json()) as { url: string }).url).toContain('error=');
    expect((await unavailableSignIn(refused(CREDENTIALS_MESSAGES.wrong))).status).toBe(401);
    expect((await unavailableSignIn(refused('CredentialsSignin'))).status).toBe(401);
    expect((await unavailableSignIn(refused(CREDENTIALS_MESSAGES.databaseUnreachable, 200))).status).toBe(200);
  });
});
