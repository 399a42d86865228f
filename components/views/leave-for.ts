// Where a console view sends a person its route refused: sign in again (with the reason the sign-in
// page explains, and the way back), choose a new password first (Z7), or the page for a role that
// cannot open this page.
export interface Refusal {
  status: number;
  code?: string;
  detail?: string;
  reason?: string;
}

/** The address to leave for, or null when the refusal is the page's own to show (missing, an error). */
export function leaveFor(refusal: Refusal, here: string): string | null {
  if (refusal.status === 401) {
    const reason = refusal.reason ? `reason=${encodeURIComponent(refusal.reason)}&` : '';
    return `/sign-in?${reason}callbackUrl=${encodeURIComponent(here)}`;
  }
  if (refusal.status === 403) return refusal.reason === 'password_change' ? '/account/password' : '/forbidden';
  return null;
}
