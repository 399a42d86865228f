// The Effect Ledger SDK (`@effect-ledger/sdk`): the ledger client, the HTTP transport, tool
// definitions, the conformance check (K4), the provider interface and the wire types. It imports
// nothing but its own files and Node built-ins. The sandbox provider's client is `./sandbox.ts`
// (`@effect-ledger/sdk/sandbox`); the in-process transport lives on the server (lib/api/direct-transport.ts).
export {
  createLedger,
  Ledger,
  ProviderRejected,
  type EffectSpec,
  type EffectResult,
  type EffectOptions,
  type CallContext,
} from './client.ts';
export { classifyHttp } from './classify.ts';
export { httpTransport, type HttpTransportOptions } from './http.ts';
export { DEFAULT_RETRY, type RetryPolicy } from './retry.ts';
export { defineTool, type ToolDefinition } from './tools.ts';
export { checkConformance, variantsOf, type ConformanceReport, type ConformanceProblem } from './conformance.ts';
export { deriveKey, providerIdempotencyKey, type KeyInput, type DerivedKey } from './keys.ts';
export { normalizeTarget, type TargetType } from './normalize.ts';
export { LedgerApiError, InvalidInputError, type LedgerApiErrorCode, type TransportErrorCode } from './errors.ts';
export {
  callFailure,
  isCallFailure,
  rawFromResponse,
  type CallFailure,
  type Classification,
  type LookupResult,
  type Provider,
  type RawResponse,
  type SendRequest,
  type SentState,
} from './provider.ts';
export * from './types.ts';
