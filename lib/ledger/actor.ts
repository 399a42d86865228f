// The actor moved down to lib/core/actor.ts so every layer may import it; this name stays for the
// few modules that still import it from the ledger.
export * from '../core/actor.ts';
