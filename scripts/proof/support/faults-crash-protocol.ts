// The messages between the crash matrix (scripts/proof/parts/crash-matrix.ts) and its child
// (scripts/proof/children/crash-effect.ts). Types and constants only: importing this runs nothing.

/** Where the child is killed: before the claim commits, after it commits (before the provider call),
 *  after the provider answered (nothing of the answer reached the ledger), after the raw response was
 *  stored (R1) but before the outcome, and after the receipt was written (done). */
export const CRASH_POINTS = [
  'before-claim-commit',
  'after-claim-commit',
  'after-provider-answer',
  'after-response-stored',
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
