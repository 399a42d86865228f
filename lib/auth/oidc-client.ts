// next-auth 4's OAuth provider for single sign-on: authorization code with PKCE and state, the ID
// token verified against the issuer's keys, and the profile taken from the ID token merged with the
// userinfo answer (identity providers differ in where they put email_verified and the groups).
import type { OAuthConfig } from 'next-auth/providers/oauth';
import type { OidcSettings } from './sign-in-methods.ts';

export type OidcClaims = Record<string, unknown> & { sub: string };

export function oidcProvider(settings: OidcSettings): OAuthConfig<OidcClaims> {
  return {
    id: 'oidc',
    name: 'Single sign-on',
    type: 'oauth',
    wellKnown: `${settings.issuer}/.well-known/openid-configuration`,
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    authorization: { params: { scope: settings.scope } },
    idToken: true,
    checks: ['pkce', 'state'],
    // openid-client's default of 3.5 s fails sign-ins when the provider is merely slow.
    httpOptions: { timeout: 15_000 },
    userinfo: {
      async request({ tokens, client }) {
        // next-auth passes the TokenSet its callback built (its type names only the plain parameters).
        const set = tokens as Exclude<Parameters<typeof client.userinfo>[0], string>;
        // openid-client checks that the userinfo answer is about the ID token's subject.
        const fromUserinfo = set.access_token ? await client.userinfo(set) : {};
        return { ...set.claims(), ...fromUserinfo };
      },
    },
    profile(profile) {
      const email = typeof profile.email === 'string' ? profile.email : '';
      const name = typeof profile.name === 'string' ? profile.name : email || profile.sub;
      return { id: profile.sub, email, name };
    },
  };
}
