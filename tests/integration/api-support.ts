// Shared set-up of the api-*, sdk-* and sandbox-* tests: a test database wired into the API's db seam,
// runtime keys, and an in-process fetch that dispatches real Requests to the route modules.
import { setDb } from '@/lib/api/db.ts';
import type { Db } from '@/lib/db/client.ts';
import { createRuntimeKey } from '@/lib/runtime-keys/index.ts';
import { dispatchApi } from '@/scripts/support/api-router.ts';

export const BASE = 'http://ledger.test';
const system = { kind: 'system', id: 'test', label: 'test setup' } as const;

export function useApiDb(db: Db): void {
  setDb(db);
}

export async function makeKey(
  db: Db,
  workflows: string[] = ['*'],
  name = `rt-${Math.random().toString(36).slice(2, 8)}`,
) {
  return createRuntimeKey({ db, actor: system }, { name, workflows });
}

/** A fetch that serves the route modules in-process (real Request and Response objects). */
export const routeFetch: typeof fetch = async (input, init) => dispatchApi(new Request(input as string, init));

export function post(
  path: string,
  body: unknown,
  options: { token?: string; idempotencyKey?: string; raw?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  return routeFetch(`${BASE}/api/v1${path}`, { method: 'POST', headers, body: options.raw ?? JSON.stringify(body) });
}

export function get(path: string, token?: string): Promise<Response> {
  return routeFetch(`${BASE}/api/v1${path}`, {
    method: 'GET',
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
}
