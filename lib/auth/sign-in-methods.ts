// Which ways of signing in this console offers, read from the environment at each call (a deployment
// changes them by restarting with other variables; the build does not fix them).
import { env } from '../env.ts';
import type { RoleMapping } from './oidc-roles.ts';

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  groupsClaim: string;
  roleMap: RoleMapping[];
  syncRoles: boolean;
}

/** Single sign-on settings, or null when OIDC_ISSUER, OIDC_CLIENT_ID or OIDC_CLIENT_SECRET is unset. */
export function oidcSettings(): OidcSettings | null {
  const e = env();
  if (!e.OIDC_ISSUER || !e.OIDC_CLIENT_ID || !e.OIDC_CLIENT_SECRET) return null;
  return {
    issuer: e.OIDC_ISSUER.replace(/\/$/, ''),
    clientId: e.OIDC_CLIENT_ID,
    clientSecret: e.OIDC_CLIENT_SECRET,
    scope: e.OIDC_SCOPE,
    groupsClaim: e.OIDC_GROUPS_CLAIM,
    roleMap: e.OIDC_ROLE_MAP,
    syncRoles: e.OIDC_SYNC_ROLES,
  };
}

export function oidcEnabled(): boolean {
  return oidcSettings() !== null;
}

/** Email + password sign-in; AUTH_CREDENTIALS=off leaves single sign-on as the only way in. */
export function credentialsEnabled(): boolean {
  return env().AUTH_CREDENTIALS === 'on';
}

export const CREDENTIALS_OFF = 'Email and password sign-in is turned off here: use single sign-on.';

/** Why a next-auth request must be refused before next-auth sees it: a credentials sign-in while
 *  credentials are off. Null when it may go on. */
export function disabledMethodProblem(pathname: string): string | null {
  if (credentialsEnabled()) return null;
  return /\/api\/auth\/(callback|signin)\/credentials\/?$/.test(pathname) ? CREDENTIALS_OFF : null;
}
