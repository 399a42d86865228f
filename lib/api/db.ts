// The database seam of the HTTP API: route handlers ask apiDb(), which is the app's client unless a
// test (or an embedding script) set another with setDb(). Keeps lib/db/client.ts untouched.
import { db as appDb, type Db } from '../db/client.ts';

const holder = globalThis as unknown as { __ledgerApiDb?: Db };

export function apiDb(): Db {
  return holder.__ledgerApiDb ?? appDb();
}

/** Process-wide override (tests: the per-file test database). Pass undefined to restore. */
export function setDb(db: Db | undefined): void {
  holder.__ledgerApiDb = db;
}
