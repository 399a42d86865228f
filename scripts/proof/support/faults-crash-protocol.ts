// The messages between the crash matrix (scripts/proof/parts/crash-matrix.ts) and its child
// (scripts/proof/children/crash-effect.ts). Types and constants only: importing this runs nothing.

/** Where the child is killed: before the claim commits, after it commits (before the provider call),
 *  after the provider answered (nothing of the answer reached the ledger), and after the receipt was
 *  written (done). The raw response travels with the outcome report (R1, one request, one transaction),
 *  so there is no moment with the response stored and the outcome not yet written. */
export const CRASH_POINTS = [
  'before-claim-commit',
  'after-claim-commit',
  'after-provider-answer',
  'after-receipt-written',
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

export interface CrashOrder {
  point: CrashPoint;
  baseUrl: string;
  runtimeKey: string;
  sandboxUrl: string;
  spec: { run: string; tool: string; action: string; record: string; target: string };
  payload: { subject: string; body: string };
}

/** The direct-transport child (scripts/proof/children/claim-in-flight.ts): its own connection. */
export interface InFlightOrder {
  /** The app role's URL with an application_name naming this trial. */
  appUrl: string;
  runtimeId: string;
  sandboxUrl: string;
  spec: CrashOrder['spec'];
  payload: CrashOrder['payload'];
}

export type ChildMessage =
  | { type: 'ready'; pid: number }
  | { type: 'at'; point: CrashPoint | 'claim-in-flight'; detail: Record<string, unknown> }
  | { type: 'finished'; result: unknown }
  | { type: 'error'; message: string };
