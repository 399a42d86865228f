// A scripted agent as its own process (node --import tsx): the framework named in FRAMEWORK runs the
// calls in CALLS through the ledger over HTTP; CRASH_AFTER makes the team's tool kill the process
// right after the provider accepted that recipient. Prints one JSON line: what the model saw, the holds.
import { createLedger, httpTransport } from '@/lib/sdk/index.ts';
import { SandboxProvider } from '@/lib/sdk/sandbox.ts';
import { runAgent, type Framework } from './runners.ts';
import { welcomeDefinition, type Welcome } from './team-tool.ts';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const ledger = createLedger(httpTransport({ baseUrl: env('LEDGER_URL'), runtimeKey: env('LEDGER_KEY') }));
const report = await runAgent(env('FRAMEWORK') as Framework, {
  guard: { ledger, definition: welcomeDefinition(env('TOOL_NAME')), run: env('RUN_ID') },
  provider: new SandboxProvider(env('SANDBOX_URL')),
  calls: JSON.parse(env('CALLS')) as Welcome[],
  crashAfter: process.env.CRASH_AFTER,
});
process.stdout.write(`${JSON.stringify(report)}\n`);
