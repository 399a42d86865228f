// Tool definitions for the SDK (K1, K4): which inputs the model writes, and the resolution step that
// turns a call's arguments into the identity of its effect. `resolve` looks the record up (a CRM, a
// database, an in-memory directory) and returns the record's canonical id and the one target, so the
// key is built from what the tool found, never from the spelling the model typed. Generated inputs
// must never influence it; checkConformance proves both.
import { normalizeRecordId, type RecordIdCase, type TargetType } from './normalize.ts';

/** What a resolution step returns: the record it found (its canonical id) and the one target. */
export interface Resolved {
  record: string;
  target: string;
}

/** What a resolution step is told besides the arguments. */
export interface ResolveContext {
  /** The registered tool's name and action tag. */
  tool: string;
  action: string;
  /** The run the call belongs to; null where there is none (the conformance check). */
  run: string | null;
}

export interface ToolDefinition<A extends object = Record<string, unknown>> {
  /** The tool name as registered in the console. */
  name: string;
  /** The action tag as registered. */
  action: string;
  targetType: TargetType;
  /** Inputs the model writes (subject, body, ...). They go to the provider, never into the key. */
  generated: readonly (keyof A & string)[];
  /** How the tool's record ids compare; `case-insensitive` case-folds them before keying. Default exact. */
  recordIds: RecordIdCase;
  /** The identity of one effect: the record the tool looked up for these arguments, and one target.
   *  Throw when there is no such record: the call is refused before anything is claimed. */
  resolve(args: A, ctx: ResolveContext): Resolved | Promise<Resolved>;
}

/** What defineTool takes. A is inferred from `resolve`'s argument type (or given: defineTool<Args>). */
export type ToolInput<A extends object> = Omit<ToolDefinition<A>, 'generated' | 'recordIds' | 'resolve'> & {
  generated: readonly NoInfer<keyof A & string>[];
  recordIds?: RecordIdCase;
} & (
    | { resolve: ToolDefinition<A>['resolve']; identity?: never }
    | {
        /** @deprecated The arguments' own spelling becomes the key: use `resolve`, which looks the record up. */
        identity: (args: A) => Resolved;
        resolve?: never;
      }
  );

export function defineTool<A extends object>(definition: ToolInput<A>): ToolDefinition<A> {
  if (!definition.name || !definition.action) throw new Error('a tool needs a name and an action tag');
  const { identity, resolve, ...rest } = definition;
  const step = resolve ?? (identity ? (args: A) => identity(args) : undefined);
  if (typeof step !== 'function')
    throw new Error(`tool ${definition.name}: a tool needs resolve(args) => ({ record, target })`);
  return Object.freeze({
    ...rest,
    generated: [...definition.generated],
    recordIds: definition.recordIds ?? 'exact',
    resolve: step,
  });
}

/** The identity of one call through the tool's resolution step. The record id is normalized here
 *  as the key will have it (format characters refused naming recordId, no surrounding whitespace,
 *  NFC, case-folded for a case-insensitive tool), so the claim sends the id exactly as keyed. */
export async function resolveIdentity<A extends object>(
  tool: ToolDefinition<A>,
  args: A,
  run: string | null,
): Promise<Resolved> {
  const resolved = await tool.resolve(args, { tool: tool.name, action: tool.action, run });
  if (!resolved || typeof resolved.record !== 'string' || typeof resolved.target !== 'string')
    throw new TypeError(`tool ${tool.name}: resolve() must return { record: string, target: string }`);
  return { record: normalizeRecordId(resolved.record, tool.recordIds), target: resolved.target };
}
