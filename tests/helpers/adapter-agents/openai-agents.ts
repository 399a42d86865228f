// The OpenAI Agents SDK runner: an Agent run by the SDK's own Runner with a scripted Model (the
// SDK's model interface) that calls the wrapped tool once per turn and records each tool output as
// it appears in its next request's input.
import {
  Agent,
  run,
  setTracingDisabled,
  Usage,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from '@openai/agents';
import { ledgeredTool } from '@/lib/sdk/adapters/openai-agents.ts';
import { sendWelcome, welcomeSchema, type Welcome } from './team-tool.ts';
import type { RunOptions, RunReport, SeenResult } from './types.ts';

setTracingDisabled(true);

const textOf = (output: unknown): string =>
  typeof output === 'string'
    ? output
    : typeof (output as { text?: unknown })?.text === 'string'
      ? (output as { text: string }).text
      : JSON.stringify(output);

class ScriptedModel implements Model {
  private turn = 0;
  readonly seen: SeenResult[] = [];
  private counted = 0;
  constructor(private readonly calls: Welcome[]) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const items = typeof request.input === 'string' ? [] : request.input;
    const results = items.filter((i) => i.type === 'function_call_result');
    for (const r of results.slice(this.counted)) {
      const text = textOf((r as { output: unknown }).output);
      const to = this.calls[Number((r as { callId: string }).callId.slice(5))]!.email;
      this.seen.push({ to, ok: !text.includes('"effect_held"'), text });
    }
    this.counted = results.length;
    const call = this.calls[this.turn];
    if (!call)
      return {
        usage: new Usage(),
        output: [
          {
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: 'Done.' }],
          },
        ],
      };
    const callId = `call-${this.turn++}`;
    return {
      usage: new Usage(),
      output: [
        {
          type: 'function_call',
          callId,
          name: 'send_welcome_email',
          status: 'completed',
          arguments: JSON.stringify(call),
        },
      ],
    };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('the scripted model answers getResponse only');
  }
}

export async function runAgents(o: RunOptions): Promise<RunReport> {
  const holds: RunReport['holds'] = [];
  const send = ledgeredTool(
    {
      name: 'send_welcome_email',
      description: 'Send a welcome email to one customer',
      parameters: welcomeSchema,
      execute: async (c) => sendWelcome(o.provider, c, o.crashAfter),
    },
    { ...o.guard, onHold: (h) => holds.push(h) },
  );
  const model = new ScriptedModel(o.calls);
  const agent = new Agent({ name: 'welcomer', instructions: 'Welcome the new customers.', model, tools: [send] });
  await run(agent, 'Welcome the new customers.', { maxTurns: o.calls.length + 2 });
  return { seen: model.seen, holds };
}
