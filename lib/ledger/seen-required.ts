// Z8 at the doors people use (console server actions, the management API): a human decision names
// the version of its target the person saw, or it is refused before anything is written. The
// commands themselves accept a decision without one, because the system's own callers (the worker
// resuming an approved bump, the demo seed, benchmarks) decide on what they just read in the same
// process; a person's decision from a page, a script or an old tab may not.

/** The input field a decision lacks, with what is missing, or null when it names every version. */
export interface MissingSeen {
  field: string;
  message: string;
  /** Bulk decisions: the keys the decision names no version for. */
  keys?: string[];
}

export type SeenRequirement<I> = (input: I) => MissingSeen | null;

/** A decision on one target: `field` must be present (a status, a set hash, an effect's version). */
export function seenField<I>(field: keyof I & string, what: string): SeenRequirement<I> {
  return (input) =>
    input[field] === undefined || input[field] === null
      ? { field, message: `${field}: a decision names the version it was made on (seen): give the ${what}` }
      : null;
}

/** Several decisions on one target: every field must be present. */
export function seenFields<I>(...requirements: SeenRequirement<I>[]): SeenRequirement<I> {
  return (input) => {
    for (const requirement of requirements) {
      const missing = requirement(input);
      if (missing) return missing;
    }
    return null;
  };
}

/** A bulk decision over keys: one version per key, each key's own (a version for some keys only is
 *  refused whole, since the keys without one would be decided blind). */
export function seenPerKey<I extends { keys: readonly string[]; seen?: Record<string, unknown> | undefined }>(
  input: I,
): MissingSeen | null {
  const missing = input.keys.filter((key) => !input.seen?.[key]);
  if (!missing.length) return null;
  const shown = missing.slice(0, 3).join(', ') + (missing.length > 3 ? ` and ${missing.length - 3} more` : '');
  return {
    field: 'seen',
    message: `seen: a decision names the version it was made on: give every key's (epoch, state, changedAt); missing for ${shown}`,
    keys: missing.slice(0, 100),
  };
}
