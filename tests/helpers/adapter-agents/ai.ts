// The Vercel AI SDK runner: generateText with the SDK's own MockLanguageModelV4 scripted to call the
// wrapped tool once per turn, recording what each tool result looked like in the model's next prompt.
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { ledgered } from '@/lib/sdk/adapters/ai.ts';
import { sendWelcome, welcomeSchema } from './team-tool.ts';
import type { RunOptions, RunReport, SeenResult } from './types.ts';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

export async function runAi(o: RunOptions): Promise<RunReport> {
  const holds: RunReport['holds'] = [];
  const send = ledgered(
    tool({
      description: 'Send a welcome email to one customer',
      inputSchema: welcomeSchema,
      execute: async (c) => sendWelcome(o.provider, c, o.crashAfter),
    }),
    { ...o.guard, onHold: (h) => holds.push(h) },
  );
  const seen: SeenResult[] = [];
  let turn = 0;
  const model = new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      // The tool results of the previous turn, exactly as they reach the model.
      const last = prompt.at(-1);
      if (last?.role === 'tool')
        for (const part of last.content)
          if (part.type === 'tool-result')
            seen.push({
              to: o.calls[Number(part.toolCallId.slice(5))]!.email,
              ok: !part.output.type.startsWith('error'),
              text: JSON.stringify(part.output),
            });
      const call = o.calls[turn];
      if (!call)
        return {
          content: [{ type: 'text', text: 'Done.' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage,
          warnings: [],
        };
      const id = `call-${turn++}`;
      return {
        content: [{ type: 'tool-call', toolCallId: id, toolName: 'send_welcome_email', input: JSON.stringify(call) }],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  await generateText({
    model,
    tools: { send_welcome_email: send },
    prompt: 'Welcome the new customers.',
    stopWhen: stepCountIs(o.calls.length + 2),
  });
  return { seen, holds };
}
