// The Effect Ledger SDK. Import directTransport from './direct.ts' only in processes that hold a
// database client; the rest of the SDK pulls no server code.
export {
  createLedger,
  Ledger,
  ProviderRejected,
  classifyHttp,
  type EffectSpec,
  type EffectResult,
  type EffectOptions,
  type CallContext,
} from './client.ts';
export { httpTransport, type HttpTransportOptions } from './http.ts';
export { defineTool, type ToolDefinition } from './tools.ts';
export { checkConformance, variantsOf, type ConformanceReport, type ConformanceProblem } from './conformance.ts';
export * from './types.ts';
