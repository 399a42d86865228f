// The error class moved down to lib/core/errors.ts so every layer may throw it; the ledger's modules
// keep importing it by this name.
export * from '../core/errors.ts';
