// LangChain.js boundary: `ledgered(tool(fn, {...}), guard)` (or any StructuredTool) returns a tool
// with the same name, description and schema whose calls go through the ledger (./guard.ts). The
// first call of an intent runs the original tool; a repeat returns the stored result; a held effect
// comes back as a ToolMessage with status "error" (LangGraph's ToolNode passes it to the model as a
// failed call), and guard.onHold tells the host.
import { ToolMessage } from '@langchain/core/messages';
import { DynamicStructuredTool, type StructuredToolInterface } from '@langchain/core/tools';
import { guardCall, type GuardOptions } from './guard.ts';

export { currentEffect, currentEffectOrNull, EffectHeldError, type EffectHold, type GuardOptions } from './guard.ts';

export function ledgered<A extends object>(
  original: StructuredToolInterface,
  guard: GuardOptions<A>,
): DynamicStructuredTool {
  return new DynamicStructuredTool({
    name: original.name,
    description: original.description,
    schema: original.schema as never,
    func: async (input: A, _runManager, config) => {
      // The inner call must answer with its raw value: without the tool call it does not wrap it in a message.
      const inner = { ...(config ?? {}), toolCall: undefined };
      const result = await guardCall(guard, input, () => original.invoke(input as never, inner));
      if (result.kind !== 'held') return result.value;
      const toolCallId = (config as { toolCall?: { id?: string } } | undefined)?.toolCall?.id ?? '';
      return new ToolMessage({
        content: JSON.stringify({ error: 'effect_held', ...result.hold }),
        tool_call_id: toolCallId,
        name: original.name,
        status: 'error',
      });
    },
  });
}
