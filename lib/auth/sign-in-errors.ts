// What the sign-in page may say. next-auth puts whatever the credentials check throws into the
// redirect's ?error=, and anyone can send a person a link with an ?error= of their choosing; so the
// check throws only the sentences below (publicSignInError), and the page shows only texts it knows
// (signInNotice): a forged "call this number" never appears on the console's own page.
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
  ...LIMIT_MESSAGES,
} as const;

const KNOWN_CREDENTIALS_MESSAGES = new Set<string>(Object.values(CREDENTIALS_MESSAGES));

/** The error a refused credentials sign-in leaves with: its own sentence, or the plain one for anything
 *  it did not foresee (whose text, such as a database error's, is logged for the operator instead). */
export function publicSignInError(error: unknown): Error {
  if (error instanceof Error && KNOWN_CREDENTIALS_MESSAGES.has(error.message)) return error;
  componentLogger('auth', true).error({ err: error }, 'sign-in failed');
  return new Error(CREDENTIALS_MESSAGES.unavailable);
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
