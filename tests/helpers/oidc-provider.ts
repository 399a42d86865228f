// A real OpenID Connect provider for the tests: npm oidc-provider, in this process, on a free port,
// with one confidential client registered for the console's callback URL and a few people whose
// claims include email, email_verified, name and groups. Its own development login and consent pages
// are what a person sees (any password is accepted: the login name picks the account). PKCE is
// required of the client, so a console that stopped sending it could not sign in.
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import Provider from 'oidc-provider';
import { freePort } from '@/lib/db/embedded.ts';

export interface TestIdentity {
  /** What the person types as login name on the provider's sign-in page. */
  login: string;
  email: string;
  name: string;
  groups: string[];
  /** The provider vouches for the email unless false. */
  emailVerified?: boolean;
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Scopes the console must ask for to get every claim (groups has a scope of its own here). */
  scope: string;
  /** The logins whose authorization code the console redeemed for tokens (with its PKCE verifier). */
  tokensIssuedTo: string[];
  stop(): Promise<void>;
}

export async function startOidcProvider(options: {
  redirectUri: string;
  accounts: TestIdentity[];
}): Promise<TestOidcProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = 'effect-ledger-console';
  const clientSecret = randomBytes(24).toString('base64url');
  const accounts = new Map(options.accounts.map((a) => [a.login, a]));
  const tokensIssuedTo: string[] = [];
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    features: { devInteractions: { enabled: true } },
    // Explicit lifetimes (seconds) keep the provider from warning about its defaults on every run.
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    async findAccount(_ctx, id) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        async claims() {
          return {
            sub: `sub-${id}`,
            email: account.email,
            email_verified: account.emailVerified ?? true,
            name: account.name,
            groups: account.groups,
          };
        },
      };
    },
  });
  provider.on('grant.success', (ctx) => {
    const accountId = (ctx as { oidc?: { account?: { accountId?: string } } }).oidc?.account?.accountId;
    if (accountId) tokensIssuedTo.push(accountId);
  });
  const server: Server = await new Promise((resolve) => {
    const s = provider.listen(port, '127.0.0.1', () => resolve(s));
  });
  return {
    issuer,
    clientId,
    clientSecret,
    scope: 'openid email profile groups',
    tokensIssuedTo,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
