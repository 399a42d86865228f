// The permission table lives in lib/core/permissions.ts, below the ledger that asks it; the console's
// pages and components keep importing it by this name.
export * from '../core/permissions.ts';
