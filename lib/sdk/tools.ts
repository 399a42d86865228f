// Tool definitions for the SDK (K1, K4): which inputs are identity and which the model writes.
// identity() maps the tool's arguments to the record (looked up by the tool, not typed by the model)
// and the one target. Generated inputs must never influence it; checkConformance proves that.
import type { TargetType } from './normalize.ts';

export interface ToolDefinition<A extends object = Record<string, unknown>> {
  /** The tool name as registered in the console. */
  name: string;
  /** The action tag as registered. */
  action: string;
  targetType: TargetType;
  /** Inputs the model writes (subject, body, ...). They go to the provider, never into the key. */
  generated: readonly (keyof A & string)[];
  /** The identity of one effect from the arguments: the resolved record and one target. */
  identity(args: A): { record: string; target: string };
}

export function defineTool<A extends object>(definition: ToolDefinition<A>): ToolDefinition<A> {
  if (!definition.name || !definition.action) throw new Error('a tool needs a name and an action tag');
  return Object.freeze({ ...definition, generated: [...definition.generated] });
}
