// next-auth 4 configuration: email + password (argon2id) always; OIDC single sign-on when
// OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set (an OIDC user must already exist
// here with the same email: roles are granted in this console, never by the identity provider).
import type { AuthOptions } from 'next-auth';
import Credentials from 'next-auth/providers/credentials';
import { appendAudit } from '../audit/append.ts';
import { db } from '../db/client.ts';
import { env } from '../env.ts';
import { dummyHash, verifyPassword } from './password.ts';
import { clearFailures, recordFailure, signInBlocked } from './rate-limit.ts';
import { currentRequest } from './request.ts';
import { authSecret } from './secret.ts';
import { newSessionId, SESSION_MAX_AGE } from './session.ts';
import { endSession } from './sign-out.ts';

// next-auth ships CommonJS: under Next and vitest the default import is the function, under plain Node
// ESM (tsx scripts such as `npm run proof`) it is the module object holding it.
const CredentialsProvider = ((Credentials as unknown as { default?: typeof Credentials }).default ??
  Credentials) as typeof Credentials;

function headerOf(req: { headers?: Record<string, unknown> } | undefined, name: string): string | null {
  const value = req?.headers?.[name];
  return typeof value === 'string' ? value : null;
}

const credentials = CredentialsProvider({
  id: 'credentials',
  name: 'Email and password',
  credentials: { email: { label: 'Email', type: 'email' }, password: { label: 'Password', type: 'password' } },
  async authorize(input, req) {
    // NUL cannot reach PostgreSQL text: without it the address is looked up (and a failure recorded) as usual,
    // instead of a database error whose text next-auth would hand back to the sign-in page.
    const email = String(input?.email ?? '')
      .replace(/\u0000/g, '')
      .trim()
      .toLowerCase();
    const password = String(input?.password ?? '');
    const ip = headerOf(req, 'x-forwarded-for')?.split(',')[0]?.trim() || headerOf(req, 'x-real-ip') || 'unknown';
    const userAgent = headerOf(req, 'user-agent');
    if (!email || !password) throw new Error('Enter your email and password.');
    const database = db();
    const blocked = await signInBlocked(database, email, ip);
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
      await recordFailure(database, email, ip);
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
      throw new Error('Email or password is not right.');
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
  },
});

function oidcProvider() {
  const e = env();
  if (!e.OIDC_ISSUER || !e.OIDC_CLIENT_ID || !e.OIDC_CLIENT_SECRET) return [];
  return [
    {
      id: 'oidc',
      name: 'Single sign-on',
      type: 'oauth' as const,
      wellKnown: `${e.OIDC_ISSUER.replace(/\/$/, '')}/.well-known/openid-configuration`,
      clientId: e.OIDC_CLIENT_ID,
      clientSecret: e.OIDC_CLIENT_SECRET,
      authorization: { params: { scope: 'openid email profile' } },
      idToken: true,
      checks: ['pkce' as const, 'state' as const],
      profile(profile: { sub: string; email?: string; name?: string }) {
        return { id: profile.sub, email: profile.email ?? '', name: profile.name ?? profile.email ?? profile.sub };
      },
    },
  ];
}

export function oidcEnabled(): boolean {
  return oidcProvider().length > 0;
}

export function authOptions(): AuthOptions {
  return {
    secret: authSecret(),
    session: { strategy: 'jwt', maxAge: SESSION_MAX_AGE },
    pages: { signIn: '/sign-in', error: '/sign-in' },
    providers: [credentials, ...oidcProvider()],
    callbacks: {
      async signIn({ user, account }) {
        if (account?.provider !== 'oidc') return true;
        const known = user.email ? await db().user.findUnique({ where: { email: user.email.toLowerCase() } }) : null;
        return Boolean(known && !known.disabled);
      },
      async jwt({ token, user, account }) {
        if (user) {
          // One id per sign-in, kept through every re-encode: sign-out revokes exactly this session (Z4).
          token.sid = newSessionId();
          if (account?.provider === 'oidc') {
            const known = await db().user.findUniqueOrThrow({ where: { email: String(user.email).toLowerCase() } });
            token.uid = known.id;
            token.sv = known.sessionVersion;
          } else {
            token.uid = user.id;
            token.sv = (user as { sv?: number }).sv;
          }
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
