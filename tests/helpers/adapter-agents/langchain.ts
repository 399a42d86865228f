// The LangChain.js runner: LangGraph's prebuilt ReAct agent (its own ToolNode executes the tools) with
// a scripted chat model (BaseChatModel) that calls the wrapped tool once per turn and records each
// ToolMessage it is shown, with its status.
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ledgered } from '@/lib/sdk/adapters/langchain.ts';
import { sendWelcome, welcomeSchema, type Welcome } from './team-tool.ts';
import type { RunOptions, RunReport, SeenResult } from './types.ts';

class ScriptedChatModel extends BaseChatModel {
  private turn = 0;
  readonly seen: SeenResult[] = [];
  constructor(private readonly calls: Welcome[]) {
    super({});
  }
  _llmType() {
    return 'scripted';
  }
  bindTools() {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const last = messages.at(-1);
    if (last instanceof ToolMessage || last?.getType() === 'tool') {
      const m = last as ToolMessage;
      const text = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
      this.seen.push({ to: this.calls[Number(m.tool_call_id.slice(5))]!.email, ok: m.status !== 'error', text });
    }
    const call = this.calls[this.turn];
    const message = call
      ? new AIMessage({
          content: '',
          tool_calls: [{ id: `call-${this.turn++}`, name: 'send_welcome_email', args: call, type: 'tool_call' }],
        })
      : new AIMessage('Done.');
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }
}

export async function runLangChain(o: RunOptions): Promise<RunReport> {
  const holds: RunReport['holds'] = [];
  const original = tool(async (c: Welcome) => sendWelcome(o.provider, c, o.crashAfter), {
    name: 'send_welcome_email',
    description: 'Send a welcome email to one customer',
    schema: welcomeSchema,
  });
  const send = ledgered(original, { ...o.guard, onHold: (h) => holds.push(h) });
  const model = new ScriptedChatModel(o.calls);
  const agent = createReactAgent({ llm: model, tools: [send] });
  await agent.invoke(
    { messages: [{ role: 'user', content: 'Welcome the new customers.' }] },
    { recursionLimit: 4 * o.calls.length + 4 },
  );
  return { seen: model.seen, holds };
}
