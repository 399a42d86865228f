// `npm run lint`: the code rules (ESLint with typescript-eslint), the architecture rules
// (dependency-cruiser: layers, no import cycles, a standalone SDK), the formatting (Prettier) and the
// generated dependency picture being current. `npm test` runs it after the type check.
import { spawnSync } from 'node:child_process';

const steps: [string, string[]][] = [
  ['eslint', ['--no-install', 'eslint', '.', '--max-warnings=0']],
  [
    'architecture',
    [
      '--no-install',
      'depcruise',
      'app',
      'components',
      'lib',
      'scripts',
      'tests',
      '--config',
      '.dependency-cruiser.cjs',
    ],
  ],
  ['format', ['--no-install', 'prettier', '--check', '.', '--log-level=warn']],
];
let failed = 0;
for (const [name, args] of steps) {
  const t0 = Date.now();
  const result = spawnSync('npx', args, { stdio: 'inherit' });
  const ok = result.status === 0;
  console.log(`[lint] ${name}: ${ok ? 'ok' : 'FAILED'} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  if (!ok) failed++;
}
const graph = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/deps-graph.ts', '--check'], {
  stdio: 'inherit',
});
if (graph.status !== 0) failed++;
process.exit(failed ? 1 : 0);
