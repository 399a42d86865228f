// The team's send tool served as a ledgered MCP server in its own process (node --import tsx):
// `stdio` with the runtime key from LEDGER_KEY, or `http` (Streamable HTTP, the key from each
// request's bearer token), which prints {"url"} once it listens.
import { createLedger, httpTransport } from '@/lib/sdk/index.ts';
import { defineMcpTool, serveHttp, serveStdio } from '@/lib/sdk/mcp/index.ts';
import { SandboxProvider } from '@/lib/sdk/sandbox.ts';
import { lookupCustomer, lookupSchema, sendWelcome, welcomeDefinition, welcomeSchema } from './team-tool.ts';

const env = (name: string) => process.env[name] ?? '';
const provider = new SandboxProvider(env('SANDBOX_URL'));
const definition = welcomeDefinition(env('TOOL_NAME'));
const tools = [
  defineMcpTool({
    definition,
    description: 'Send a welcome email to one customer',
    inputSchema: welcomeSchema,
    execute: (c) => sendWelcome(provider, c),
  }),
  defineMcpTool({
    definition: {
      ...definition,
      name: 'lookup_customer',
      resolve: (c: { customerId: string }) => ({ record: c.customerId, target: '' }),
      generated: [],
    },
    description: 'Look a customer up (read-only)',
    inputSchema: lookupSchema,
    execute: lookupCustomer,
    readOnly: true,
  }),
];
if (process.argv[2] === 'http') {
  const served = await serveHttp({ ledgerUrl: env('LEDGER_URL'), run: env('RUN_ID'), tools });
  process.stdout.write(`${JSON.stringify({ url: served.url })}\n`);
} else {
  const ledger = createLedger(httpTransport({ baseUrl: env('LEDGER_URL'), runtimeKey: env('LEDGER_KEY') }));
  await serveStdio({ ledger, run: env('RUN_ID'), tools });
}
