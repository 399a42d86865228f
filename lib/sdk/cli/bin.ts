// The `effect-ledger` executable of the SDK package (its `bin`): runs the CLI and exits with its code.
import { main } from './main.ts';

process.exitCode = await main(process.argv.slice(2), {
  stdout: (s) => process.stdout.write(s),
  stderr: (s) => process.stderr.write(s),
  env: process.env,
});
