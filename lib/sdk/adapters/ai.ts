// Vercel AI SDK boundary: `ledgered(tool({...}), guard)` wraps an AI SDK tool's execute with the
// ledger (./guard.ts). The first call of an intent runs the tool; a repeat returns the stored result
// without running it; a held effect throws EffectHeldError, which the AI SDK turns into a tool-error
// output: the model reads an error, never a success. Everything else about the tool is untouched.
import type { InferToolInput, InferToolOutput, Tool, ToolExecutionOptions } from 'ai';
import { EffectHeldError, guardCall, type GuardOptions } from './guard.ts';

export { currentEffect, currentEffectOrNull, EffectHeldError, type EffectHold, type GuardOptions } from './guard.ts';

// `Tool` with its defaults: any AI SDK tool, whatever its input, output and context types.
type AnyTool = Tool;
type ContextOf<T> = T extends Tool<never, never, infer C> ? C : never;

/** The same tool with an execute that is always there and always a promise of the tool's output
 *  (a streaming tool's last value): what the wrapper does, typed as the installed `ai` types a call. */
// The execute signature comes first: where both are callable, a call takes it (an intersection's
// signatures are tried in order), and the tool stays the very type the AI SDK accepts in `tools`.
export type LedgeredTool<T extends AnyTool> = {
  execute: (input: InferToolInput<T>, options: ToolExecutionOptions<ContextOf<T>>) => Promise<InferToolOutput<T>>;
} & T;

export function ledgered<T extends AnyTool>(tool: T, guard: GuardOptions<InferToolInput<T> & object>): LedgeredTool<T> {
  type A = InferToolInput<T> & object;
  const execute = tool.execute;
  if (!execute) throw new TypeError('ledgered(): this AI SDK tool has no execute function to protect');
  const wrapped = async (input: A, options: ToolExecutionOptions<unknown>) => {
    const result = await guardCall(guard, input, async () => {
      const out = execute(input, options as never) as unknown;
      if (out && typeof out === 'object' && Symbol.asyncIterator in out) {
        // A streaming tool's last value is its result: the ledger stores and replays that one.
        let last: unknown;
        for await (const part of out as AsyncIterable<unknown>) last = part;
        return last;
      }
      return await out;
    });
    if (result.kind === 'held') throw new EffectHeldError(result.hold);
    return result.value as InferToolOutput<T>;
  };
  return { ...tool, execute: wrapped } as unknown as LedgeredTool<T>;
}
