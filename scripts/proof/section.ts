// The contract between `npm run proof` (scripts/proof/index.ts) and its parts (scripts/proof/parts/*.ts).
// Each part exports `proof: ProofPart`. The runner calls every part with scale 'full' and writes
// docs/RELIABILITY.md; a vitest file (tests/integration/proof-*.test.ts) calls the same part with scale
// 'reduced' and asserts that nothing was lost, duplicated or allowed without authority.

export interface ProofDatabase {
  /** The owner's URL (migrations, tamper checks, counting rows the app role may not read). */
  ownerUrl: string;
  /** The app login role's URL: what the product connects as (A3). */
  appUrl: string;
}

export interface ProofContext {
  /** 'full' for `npm run proof` (the counts), 'reduced' inside `npm test` (same code, fewer trials). */
  scale: 'full' | 'reduced';
  /** A fresh migrated database (on a shared server) for this part alone; dropped when the run ends. */
  newDatabase(): Promise<ProofDatabase>;
  /** A progress line for the console ("crash matrix: point 2, 37/100"). */
  log(line: string): void;
}

export interface ProofRow {
  /** What was tried, in words a reader understands ("kill -9 after the claim commits"). */
  tried: string;
  /** How many times. */
  trials: number;
  /** Effects that should have happened and did not, without any state saying so (silent loss). */
  lost: number;
  /** Effects delivered more than once, counted at the provider (SMTP server, sandbox). */
  duplicated: number;
  /** Calls that succeeded without authority, or bad input that changed something. */
  unauthorized: number;
  /** What was observed: end states, status codes, p95, ... */
  observed: string;
}

export interface ProofSection {
  /** Section heading in docs/RELIABILITY.md ("Faults: crash matrix"). */
  title: string;
  /** Which issue / rules it proves ("issue 6; S1, R2, C1-C3"). */
  proves: string;
  rows: ProofRow[];
  /** Free-form lines printed under the table (method, caveats). */
  notes?: string[];
}

export type ProofPart = (ctx: ProofContext) => Promise<ProofSection>;

/** Sort key for the report: parts are listed in this order, unknown names last. */
export const PART_ORDER = ['crash-matrix', 'replay-faults', 'provider-faults', 'load', 'bad-input', 'security'];
