// What the sign-in page may say. next-auth puts whatever the credentials check throws into the
// redirect's ?error=, and anyone can send a person a link with an ?error= of their choosing; so the
// check throws only the sentences below (publicSignInError), and the page shows only texts it knows
// (signInNotice): a forged "call this number" never appears on the console's own page.
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../core/problem.ts';
import { isConnectionLoss } from '../db/connection-loss.ts';
import { componentLogger } from '../ops/log.ts';
import { LIMIT_MESSAGES } from './rate-limit.ts';

export type OidcRefusal = 'sso_unverified' | 'sso_unknown' | 'sso_disabled';

/** What the sign-in page tells a refused person (the refusal code travels in the redirect). */
export const OIDC_REFUSAL_MESSAGES: Record<OidcRefusal, string> = {
  sso_unverified: 'Your identity provider did not confirm your email address, so single sign-on cannot match you.',
  sso_unknown: 'There is no console account for you and none of your groups gives one. Ask an admin for access.',
  sso_disabled: 'This account is disabled. Ask an admin.',
};

/** The sentences the credentials check refuses with. */
export const CREDENTIALS_MESSAGES = {
  missing: 'Enter your email and password.',
  wrong: 'Email or password is not right.',
  unavailable: 'Sign-in could not be completed right now. Try again in a moment.',
  databaseUnreachable:
    'The console cannot reach its database right now, so your password was not checked. Try again in a moment.',
  ...LIMIT_MESSAGES,
} as const;

const KNOWN_CREDENTIALS_MESSAGES = new Set<string>(Object.values(CREDENTIALS_MESSAGES));

/** The error a refused credentials sign-in leaves with: its own sentence, or the plain one for anything
 *  it did not foresee (whose text, such as a database error's, is logged for the operator instead). */
export function publicSignInError(error: unknown): Error {
  if (error instanceof Error && KNOWN_CREDENTIALS_MESSAGES.has(error.message)) return error;
  // A database that cannot serve is not a wrong password: the person is told so, and the route
  // answers 503 with Retry-After (unavailableSignIn).
  if (isConnectionLoss(error)) {
    componentLogger('auth', true).warn({ err: error }, 'sign-in not checked: the database is unreachable');
    return new Error(CREDENTIALS_MESSAGES.databaseUnreachable);
  }
  componentLogger('auth', true).error({ err: error }, 'sign-in failed');
  return new Error(CREDENTIALS_MESSAGES.unavailable);
}

const UNREACHABLE_REDIRECT = `error=${encodeURIComponent(CREDENTIALS_MESSAGES.databaseUnreachable)}`;

/**
 * next-auth answers every refused credentials sign-in 401, a database outage included. This turns
 * that one refusal into 503 with Retry-After (same body, so the sign-in form still shows the
 * sentence), for load balancers, monitors and clients that retry; any other answer is returned as is.
 */
export async function unavailableSignIn(
  response: Response,
  retryAfterSeconds = UNAVAILABLE_RETRY_AFTER_SECONDS,
): Promise<Response> {
  if (response.status !== 401) return response;
  const body = await response.clone().text();
  const location = response.headers.get('location') ?? '';
  if (!body.includes(UNREACHABLE_REDIRECT) && !location.includes(UNREACHABLE_REDIRECT)) return response;
  const headers = new Headers(response.headers);
  headers.set('retry-after', String(retryAfterSeconds));
  headers.set('cache-control', 'no-store');
  return new Response(body, { status: 503, headers });
}

// ?reason= codes the console itself sends people to the sign-in page with, ?error= codes of single
// sign-on (this console's and next-auth's own), and the credentials check's sentences.
const NOTICES: Record<string, string> = {
  no_session: '',
  session_revoked: 'Your session ended because your account or role changed. Sign in again.',
  disabled: 'This account is disabled. Ask an admin.',
  unknown_user: 'This account no longer exists.',
  signed_out: 'You are signed out.',
  password_changed: 'Your password is changed. Sign in with the new one.',
  ...OIDC_REFUSAL_MESSAGES,
  OAuthSignin: 'Single sign-on could not start: the identity provider did not answer. Try again or ask an admin.',
  OAuthCallback: 'Single sign-on did not complete (the identity provider refused or the answer did not verify).',
  AccessDenied: 'Single sign-on was refused.',
  sso_unavailable: 'Single sign-on could not be completed right now. Try again in a moment.',
  // next-auth's code when the check answered "no" without a sentence: the form says it already.
  CredentialsSignin: '',
  ...Object.fromEntries([...KNOWN_CREDENTIALS_MESSAGES].map((m) => [m, m])),
};

/** The notice for the sign-in page's ?reason= and ?error=: a known text, or nothing. */
export function signInNotice(params: { reason?: unknown; error?: unknown }): string {
  // A repeated parameter arrives as a list: that is no code of ours either.
  const known = (code: unknown) => (typeof code === 'string' && Object.hasOwn(NOTICES, code) ? NOTICES[code]! : '');
  return known(params.reason) || known(params.error);
}
