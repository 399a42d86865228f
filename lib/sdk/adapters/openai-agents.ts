// OpenAI Agents SDK (JavaScript) boundary: `ledgeredTool({ ...the options you pass to tool() }, guard)`
// builds the same function tool with its execute behind the ledger (./guard.ts). A FunctionTool hides
// its execute and turns its errors into text, so the boundary wraps the options, not the built tool.
// The first call of an intent runs; a repeat returns the stored result; a held effect never reads as
// success: the model gets an `effect_held` error (errorFunction) and the host gets guard.onHold, or,
// with `errorFunction: null`, the EffectHeldError itself, which stops the run.
import {
  tool,
  type RunContext,
  type ToolExecuteArgument,
  type ToolInputParameters,
  type ToolOptions,
  type ToolOutputSchema,
  type UnknownContext,
} from '@openai/agents';
import { EffectHeldError, guardCall, type GuardOptions } from './guard.ts';

export { currentEffect, currentEffectOrNull, EffectHeldError, type EffectHold, type GuardOptions } from './guard.ts';

type ExecuteOf = (input: unknown, context?: RunContext<unknown>, details?: unknown) => unknown;
type ErrorFunction = (context: RunContext<unknown>, error: unknown, details?: unknown) => unknown;

/** What the model reads for a held call: an error naming the state, and that nothing may be retried. */
export function heldMessage(error: EffectHeldError): string {
  return JSON.stringify({
    error: 'effect_held',
    ...error.hold,
    instruction: 'Do not retry and do not report success.',
  });
}

/** Takes what `tool()` takes and gives what it gives, with the same type parameters: the parameters'
 *  schema types `execute`'s input and the guard's definition, and the built tool keeps them. */
export function ledgeredTool<
  TParameters extends ToolInputParameters = undefined,
  Context = UnknownContext,
  Result = string,
  TOutputSchema extends ToolOutputSchema | undefined = undefined,
>(
  // Result is inferred from execute (tool() leaves it at string): the built tool's invoke keeps it.
  options: ToolOptions<TParameters, Context, TOutputSchema> & {
    execute: (
      input: ToolExecuteArgument<TParameters>,
      context?: RunContext<Context>,
      details?: never,
    ) => Result | Promise<Result>;
  },
  guard: GuardOptions<ToolExecuteArgument<TParameters> & object>,
): ReturnType<typeof tool<TParameters, Context, Result, TOutputSchema>> {
  type A = ToolExecuteArgument<TParameters> & object;
  // The options' union (strict or not, with or without an output schema) is passed through whole;
  // only execute and errorFunction are replaced, with functions of the same shape.
  const execute = options.execute as unknown as ExecuteOf;
  const theirs = (options as { errorFunction?: ErrorFunction | null }).errorFunction;
  const errorFunction =
    theirs === null
      ? null
      : (context: RunContext<unknown>, error: unknown, details?: unknown) =>
          error instanceof EffectHeldError
            ? heldMessage(error)
            : theirs
              ? theirs(context, error, details)
              : 'An error occurred while running the tool. Please try again.';
  const wrapped = async (input: A, context?: RunContext<unknown>, details?: unknown) => {
    const result = await guardCall(guard, input, async () => execute(input, context, details));
    if (result.kind === 'held') throw new EffectHeldError(result.hold);
    return result.value;
  };
  const replaced = { ...options, execute: wrapped, errorFunction } as ToolOptions<TParameters, Context, TOutputSchema>;
  return tool<TParameters, Context, Result, TOutputSchema>(replaced);
}
