// An MCP server (@modelcontextprotocol/sdk) whose tools are the team's registered tools behind the
// ledger (../adapters/guard.ts), plus `get_effect`. The runtime key and the run come from the server's
// configuration (stdio) or the HTTP request's bearer token, never from tool arguments; an effect's key
// is derived from what the tool's resolution step returned, never given by the model. A held effect is an MCP error result.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { guardCall, type GuardOptions } from '../adapters/guard.ts';
import type { Ledger } from '../client.ts';
import { deriveKey } from '../keys.ts';
import { resolveIdentity, type ToolDefinition } from '../tools.ts';

export interface LedgeredMcpTool<A extends object> {
  /** The registered tool: its name is the MCP tool's name. */
  definition: ToolDefinition<A>;
  description: string;
  /** The arguments as a zod object (identity and generated inputs alike). */
  inputSchema: z.ZodObject;
  /** The team's own implementation; inside it, currentEffect() gives the provider idempotency key. */
  execute(args: A): unknown;
  /** Declared read-only: runs on every call, no claim. */
  readOnly?: boolean;
  receipt?: GuardOptions<A>['receipt'];
}

/** Keeps the argument type of one tool (a list of tools holds them as LedgeredMcpTool<never>). */
export const defineMcpTool = <A extends object>(tool: LedgeredMcpTool<A>): LedgeredMcpTool<A> => tool;

export interface LedgerMcpOptions {
  ledger: Ledger;
  /** The run these calls belong to (from ledger.createRun), or a function returning it. */
  run: string | (() => string);
  tools: LedgeredMcpTool<never>[];
  name?: string;
  version?: string;
}

const text = (value: unknown, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value ?? null) }],
  ...(isError ? { isError: true } : {}),
});

export function createLedgerMcpServer(options: LedgerMcpOptions): McpServer {
  const server = new McpServer({ name: options.name ?? 'effect-ledger', version: options.version ?? '1.0.0' });
  const runOf = () => (typeof options.run === 'function' ? options.run() : options.run);
  const triggers = new Map<string, string>();
  const triggerOf = async (run: string) => {
    if (!triggers.has(run)) triggers.set(run, (await options.ledger.readRun(run)).run.triggerId);
    return triggers.get(run)!;
  };

  for (const tool of options.tools as LedgeredMcpTool<object>[]) {
    const guard: GuardOptions<object> = {
      ledger: options.ledger,
      definition: tool.definition,
      run: runOf,
      readOnly: tool.readOnly,
      receipt: tool.receipt,
    };
    server.registerTool(
      tool.definition.name,
      {
        description: tool.description,
        inputSchema: tool.inputSchema,
        annotations: { readOnlyHint: tool.readOnly ?? false, idempotentHint: true },
      },
      async (args: object) => {
        const result = await guardCall(guard, args, async () => tool.execute(args));
        if (result.kind === 'held') return text({ error: 'effect_held', ...result.hold }, true);
        return text(result.value);
      },
    );
  }

  server.registerTool(
    'get_effect',
    {
      description:
        "The ledger's record of one call of a tool: state (pending, done, failed, unknown, revoked, stuck), epoch and receipt. Give the tool's name and the arguments of that call; the key is derived from the record the tool resolves for them.",
      inputSchema: z.object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()) }),
      annotations: { readOnlyHint: true },
    },
    async ({ tool: name, arguments: args }) => {
      const tool = options.tools.find((t) => t.definition.name === name) as LedgeredMcpTool<object> | undefined;
      if (!tool || tool.readOnly)
        return text({ error: 'unknown_tool', detail: `no ledgered tool named ${name}` }, true);
      const parsed = tool.inputSchema.safeParse(args);
      if (!parsed.success) return text({ error: 'invalid_arguments', detail: parsed.error.message }, true);
      const run = runOf();
      let id;
      try {
        id = await resolveIdentity(tool.definition, parsed.data, run);
      } catch (error) {
        return text({ error: 'unresolved', detail: (error as Error).message }, true);
      }
      const { key } = deriveKey({
        triggerId: await triggerOf(run),
        tool: tool.definition.name,
        action: tool.definition.action,
        recordId: id.record,
        targetType: tool.definition.targetType,
        target: id.target,
      });
      try {
        const { response: _response, ...effect } = await options.ledger.readEffect(key);
        return text(effect);
      } catch (error) {
        if ((error as { code?: string }).code === 'not_found') return text({ key, state: 'not_started' });
        throw error;
      }
    },
  );
  return server;
}
