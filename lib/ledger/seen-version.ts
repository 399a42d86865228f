// The versions a console decision carries (Z8) and the facts of a stale refusal: plain data and
// pure functions, so the console's client components can build and read them without the server code.

/** One side of a stale decision: the target as the person saw it, or as it is now. */
export interface TargetVersion {
  state: string;
  epoch?: number;
  /** Plans and replay requests: the hash of the set. */
  hash?: string;
  changedAt?: string | null;
}

/** The facts of a refused stale decision, sent as JSON to the console or an HTTP client. */
export interface StaleFacts {
  subjectType: 'effect' | 'plan' | 'approval' | 'replay';
  subjectId: string;
  was: TargetVersion;
  now: TargetVersion;
  /** Who made the change the person did not see, and when (ISO); null when nobody is on record. */
  changedBy: string | null;
  changedAt: string | null;
  /** The input fields that decide again on the version shown in `now`. */
  retry: Record<string, unknown>;
}

/** What the page showed of an effect: the key's current epoch, its state (`none`: a planned target
 *  nobody has claimed) and when it last changed. */
export interface SeenEffectVersion {
  epoch: number;
  state: string;
  changedAt: string | null;
}

/** The version of an effect as a page shows it (a Date from a server component, an ISO string once
 *  it crossed to the client). */
export function seenEffect(row: {
  epoch: number | null | undefined;
  state: string | null | undefined;
  changedAt: Date | string | null | undefined;
}): SeenEffectVersion {
  const at = row.changedAt ? new Date(row.changedAt).toISOString() : null;
  return { epoch: row.epoch ?? 1, state: row.state ?? 'none', changedAt: row.state ? at : null };
}

/** The stale facts in an action's refusal details, if the refusal was a stale decision. */
export function staleFactsOf(details: Record<string, unknown> | undefined): StaleFacts | null {
  const stale = details?.stale;
  return stale && typeof stale === 'object' && 'retry' in stale && 'now' in stale ? (stale as StaleFacts) : null;
}

const SUBJECT_WORD: Record<StaleFacts['subjectType'], string> = {
  effect: 'target',
  plan: 'plan',
  approval: 'request',
  replay: 'replay set',
};

/** "This target changed while you were looking: it is now Done (was Pending), by run-42 at ..." */
export function describeStale(facts: StaleFacts, label: (state: string) => string = (s) => s): string {
  const side = (v: TargetVersion) =>
    `${label(v.state)}${v.epoch !== undefined && v.epoch !== facts.was.epoch ? ` at epoch ${v.epoch}` : ''}`;
  const changed =
    facts.now.state === facts.was.state && facts.now.epoch === facts.was.epoch
      ? `it is ${side(facts.now)} again, changed since you looked`
      : `it is now ${side(facts.now)} (was ${label(facts.was.state)}${
          facts.now.epoch !== facts.was.epoch && facts.was.epoch !== undefined ? ` at epoch ${facts.was.epoch}` : ''
        })`;
  const by = facts.changedBy ? `, by ${facts.changedBy}` : '';
  return `This ${SUBJECT_WORD[facts.subjectType]} changed while you were looking: ${changed}${by}`;
}
