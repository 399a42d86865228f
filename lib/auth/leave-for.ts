// Where a person the console turned away goes, decided in one place for every door: the server pages
// (./page.ts), a console route opened as a page (./guard.ts) and the client views' fetches
// (components/views/fetch-view.ts). Signed out: to sign in (with the reason the sign-in page explains,
// and the way back); a password someone else chose: to its change first (Z7); no role that may open
// it: the page that says so. Pure, so the browser and the server import the same answer.
export const SIGN_IN_PATH = '/sign-in';
export const CHANGE_PASSWORD_PATH = '/account/password';
export const FORBIDDEN_PATH = '/forbidden';

export interface Refusal {
  status: number;
  code?: string;
  detail?: string;
  /** Why: a session problem (signed_out, session_revoked, ...) or `password_change`. */
  reason?: string | null;
}

/** The address to leave for, or null when the refusal is the page's own to show (missing, an error).
 *  `here` is the console address to come back to after signing in. */
export function leaveFor(refusal: Refusal & { status: 401 | 403 }, here?: string | null): string;
export function leaveFor(refusal: Refusal, here?: string | null): string | null;
export function leaveFor(refusal: Refusal, here?: string | null): string | null {
  if (refusal.status === 401) {
    const query = [
      refusal.reason ? `reason=${encodeURIComponent(refusal.reason)}` : null,
      here ? `callbackUrl=${encodeURIComponent(here)}` : null,
    ].filter(Boolean);
    return query.length ? `${SIGN_IN_PATH}?${query.join('&')}` : SIGN_IN_PATH;
  }
  if (refusal.status === 403) return refusal.reason === 'password_change' ? CHANGE_PASSWORD_PATH : FORBIDDEN_PATH;
  return null;
}
