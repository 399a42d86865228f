// Whether the console's `.next` build is current: `npm start`, the browser tests, the SDK benchmark and
// the load proof rebuild (or choose another server) only when a source is newer than the last build.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const SOURCES = ['app', 'components', 'lib', 'public', 'next.config.js', 'package.json', 'package-lock.json'];

function newestMtime(entry: string): number {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const child of readdirSync(entry)) {
    if (child === 'generated' || child === 'node_modules') continue;
    newest = Math.max(newest, newestMtime(path.join(entry, child)));
  }
  return newest;
}

/** True when `<root>/.next` holds a build newer than every source it was built from. */
export function nextBuildIsFresh(root = process.cwd()): boolean {
  const buildId = path.join(root, '.next/BUILD_ID');
  if (!existsSync(buildId)) return false;
  const built = statSync(buildId).mtimeMs;
  return !SOURCES.some((p) => newestMtime(path.join(root, p)) > built);
}
