// The part of oidc-provider's API the test identity provider uses (the package ships no types).
declare module 'oidc-provider' {
  import type { Server } from 'node:http';

  export interface OidcAccount {
    accountId: string;
    claims(use: string, scope: string): Promise<Record<string, unknown> & { sub: string }>;
  }

  export interface ProviderConfiguration {
    clients?: Record<string, unknown>[];
    claims?: Record<string, string[] | null>;
    scopes?: string[];
    findAccount?: (ctx: unknown, id: string) => Promise<OidcAccount | undefined>;
    pkce?: { required?: () => boolean };
    cookies?: { keys?: string[] };
    features?: Record<string, { enabled: boolean }>;
    conformIdTokenClaims?: boolean;
    ttl?: Record<string, number>;
  }

  export class Provider {
    constructor(issuer: string, configuration?: ProviderConfiguration);
    listen(port: number, host: string, callback?: () => void): Server;
    proxy: boolean;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export default Provider;
}
