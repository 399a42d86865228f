// The JWT secret for next-auth. NEXTAUTH_SECRET wins; otherwise one is generated once and kept in
// the data directory beside the embedded database's credentials, so every process of one
// installation (the app, scripts) agrees on it and a restart keeps people signed in.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { env } from '../env.ts';

let cached: string | undefined;

export function authSecret(): string {
  if (cached) return cached;
  const fromEnv = env().NEXTAUTH_SECRET;
  if (fromEnv) return (cached = fromEnv);
  const dir = path.resolve(env().LEDGER_DATA_DIR);
  const file = path.join(dir, 'auth-secret');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
  }
  return (cached = readFileSync(file, 'utf8').trim());
}
