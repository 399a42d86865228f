// next-auth 4 configuration: email + password (argon2id) unless AUTH_CREDENTIALS=off; OIDC single
// sign-on when OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set. Who a single sign-on lets
// in, and with which role, is decided in ./oidc-sign-in.ts.
import type { AuthOptions } from 'next-auth';
import Credentials from 'next-auth/providers/credentials';
import { appendAudit } from '../audit/append.ts';
import { db } from '../db/client.ts';
import { admitOidcSignIn } from './oidc-sign-in.ts';
import { oidcProvider } from './oidc-client.ts';
import { dummyHash, verifyPassword } from './password.ts';
import { beginAttempt, clearFailures } from './rate-limit.ts';
import { currentRequest } from './request.ts';
import { authSecret } from './secret.ts';
import { CREDENTIALS_MESSAGES, publicSignInError } from './sign-in-errors.ts';
import { credentialsEnabled, oidcSettings } from './sign-in-methods.ts';
import { newSessionClaims, SESSION_MAX_AGE } from './session.ts';
import { endSession } from './sign-out.ts';

// next-auth ships CommonJS: under Next and vitest the default import is the function, under plain Node
// ESM (tsx scripts such as `npm run proof`) it is the module object holding it.
const CredentialsProvider = ((Credentials as unknown as { default?: typeof Credentials }).default ??
  Credentials) as typeof Credentials;

function headerOf(req: { headers?: Record<string, unknown> } | undefined, name: string): string | null {
  const value = req?.headers?.[name];
  return typeof value === 'string' ? value : null;
}

/** RFC 5321 caps an address at 254 characters: a longer one names no account. */
const EMAIL_MAX_LENGTH = 254;

async function checkCredentials(
  input: Record<string, unknown> | undefined,
  req: { headers?: Record<string, unknown> } | undefined,
) {
  // NUL cannot reach PostgreSQL text: without it the address is looked up (and a failure recorded) as usual.
  const email = String(input?.email ?? '')
    .replace(/\u0000/g, '')
    .trim()
    .toLowerCase();
  const password = String(input?.password ?? '');
  const ip = headerOf(req, 'x-forwarded-for')?.split(',')[0]?.trim() || headerOf(req, 'x-real-ip') || 'unknown';
  const userAgent = headerOf(req, 'user-agent');
  if (!email || !password) throw new Error(CREDENTIALS_MESSAGES.missing);
  // Answered like any wrong address, and written nowhere: neither the limit's rows nor the trail grow
  // by whatever length a client sends.
  if (email.length > EMAIL_MAX_LENGTH) throw new Error(CREDENTIALS_MESSAGES.wrong);
  const database = db();
  // Counted as a failure before the password is checked (Z4, ./rate-limit.ts), cleared on success.
  const blocked = await beginAttempt(database, email, ip);
  if (blocked) {
    await appendAudit(database, {
      chain: `auth:${email}`,
      actor: { kind: 'system', id: 'sign-in', label: email },
      action: 'auth.sign_in',
      subjectType: 'user',
      subjectId: email,
      outcome: 'refused',
      detail: { why: 'rate limited' },
      request: { ip, userAgent },
    });
    throw new Error(blocked);
  }
  const user = await database.user.findUnique({ where: { email }, omit: { passwordHash: false } });
  const ok = user?.passwordHash
    ? await verifyPassword(user.passwordHash, password)
    : (await verifyPassword(await dummyHash(), password), false);
  if (!user || !ok || user.disabled) {
    await appendAudit(database, {
      chain: `auth:${email}`,
      actor: { kind: 'system', id: 'sign-in', label: email },
      action: 'auth.sign_in',
      subjectType: 'user',
      subjectId: user?.id ?? email,
      outcome: 'refused',
      detail: { why: user?.disabled ? 'disabled' : 'bad credentials' },
      request: { ip, userAgent },
    });
    throw new Error(CREDENTIALS_MESSAGES.wrong);
  }
  await clearFailures(database, email);
  await appendAudit(database, {
    chain: `user:${user.id}`,
    actor: { kind: 'user', id: user.id, label: user.email, role: user.role },
    action: 'auth.sign_in',
    subjectType: 'user',
    subjectId: user.id,
    request: { ip, userAgent },
  });
  return { id: user.id, email: user.email, name: user.name, sv: user.sessionVersion };
}

const credentials = CredentialsProvider({
  id: 'credentials',
  name: 'Email and password',
  credentials: { email: { label: 'Email', type: 'email' }, password: { label: 'Password', type: 'password' } },
  async authorize(input, req) {
    try {
      return await checkCredentials(input, req);
    } catch (error) {
      // next-auth hands the message to the sign-in page: only the check's own sentences go there.
      throw publicSignInError(error);
    }
  },
});

export function authOptions(): AuthOptions {
  const sso = oidcSettings();
  return {
    secret: authSecret(),
    session: { strategy: 'jwt', maxAge: SESSION_MAX_AGE },
    pages: { signIn: '/sign-in', error: '/sign-in' },
    providers: [...(credentialsEnabled() ? [credentials] : []), ...(sso ? [oidcProvider(sso)] : [])],
    callbacks: {
      async signIn({ user, account, profile }) {
        if (account?.provider !== 'oidc') return true;
        if (!sso) return false;
        const info = await currentRequest().catch(() => null);
        const admission = await admitOidcSignIn(
          db(),
          (profile ?? {}) as Record<string, unknown>,
          sso,
          info ? { ip: info.ip, userAgent: info.userAgent, requestId: info.requestId } : undefined,
        ).catch((error: unknown) => {
          // The person sees a plain sentence, not the database's error text.
          console.error('[auth] single sign-on admission failed', error);
          return null;
        });
        if (!admission) return '/sign-in?error=sso_unavailable';
        if (!admission.ok) return `/sign-in?error=${admission.refusal}`;
        // next-auth hands this same object to the jwt callback below: from here on the user is the
        // console's person, not the identity provider's subject.
        Object.assign(user, {
          id: admission.user.id,
          email: admission.user.email,
          name: admission.user.name,
          sv: admission.user.sessionVersion,
        });
        return true;
      },
      async jwt({ token, user }) {
        if (user) {
          // One id and sign-in time per sign-in, kept through every re-encode: sign-out revokes exactly
          // this session, and no copy of it outlives SESSION_ABSOLUTE_MAX (Z4).
          Object.assign(token, newSessionClaims());
          token.uid = user.id;
          token.sv = (user as { sv?: number }).sv;
        }
        return token;
      },
      async session({ session, token }) {
        return { ...session, uid: token.uid };
      },
    },
    events: {
      async signOut({ token }) {
        const info = await currentRequest().catch(() => null);
        await endSession(
          db(),
          token,
          info ? { ip: info.ip, userAgent: info.userAgent, requestId: info.requestId } : undefined,
        );
      },
    },
  };
}
