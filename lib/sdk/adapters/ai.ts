// Vercel AI SDK boundary: `ledgered(tool({...}), guard)` wraps an AI SDK tool's execute with the
// ledger (./guard.ts). The first call of an intent runs the tool; a repeat returns the stored result
// without running it; a held effect throws EffectHeldError, which the AI SDK turns into a tool-error
// output: the model reads an error, never a success. Everything else about the tool is untouched.
import type { Tool, ToolExecutionOptions } from 'ai';
import { EffectHeldError, guardCall, type GuardOptions } from './guard.ts';

export { currentEffect, currentEffectOrNull, EffectHeldError, type EffectHold, type GuardOptions } from './guard.ts';

// `Tool` with its defaults: any AI SDK tool, whatever its input, output and context types.
type AnyTool = Tool;
type InputOf<T> = T extends Tool<infer I, unknown, never> ? I : never;

export function ledgered<T extends AnyTool, A extends object = InputOf<T> & object>(
  tool: T,
  guard: GuardOptions<A>,
): T {
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
    return result.value;
  };
  return { ...tool, execute: wrapped } as T;
}
