// The provider interface (Provider, RawResponse, SendRequest, Classification, LookupResult) and the
// call-failure marker live in the SDK (lib/sdk/provider.ts), which agent teams install on its own;
// the server's providers use the same definitions through this module. Only server settings are here.
export * from '../sdk/provider.ts';

export interface ProviderSettingsBase {
  /** Sends per second across this process (the replay executor waits for a token). */
  rateLimitPerSecond?: number;
  /** Overrides the tool's settle window (C2) for keys sent through this provider. */
  settleWindowSeconds?: number;
  /** The executor aborts a send after this long (default 30): an ambiguous outcome (S4). */
  sendTimeoutSeconds?: number;
}
