// Shared set-up of the manage-* tests: real people with grants, their personal access tokens, and
// calls to the management API through the production front's router (scripts/support/api-router.ts).
import { createAccessToken } from '@/lib/auth/access-tokens.ts';
import { insertUser } from '@/lib/auth/users.ts';
import type { Role } from '@/lib/db/generated/enums.ts';
import type { Db } from '@/lib/db/client.ts';
import { dispatchApi } from '@/scripts/support/api-router.ts';
import { suffix } from '../helpers/factories.ts';

const system = { kind: 'system', id: 'test', label: 'test setup' } as const;

export interface Person {
  id: string;
  email: string;
  token: string;
  tokenId: string;
}

/** A person with `role` on every workflow (or, with `workflow`, only there) and a token of theirs. */
export async function person(db: Db, role: Role, workflow?: string): Promise<Person> {
  const email = `${role}-${suffix()}@example.com`;
  const u = await insertUser(db, { email, name: role, role, password: 'a-long-enough-password' }, system);
  if (workflow) {
    await db.roleGrant.deleteMany({ where: { userId: u.id } });
    await db.roleGrant.create({ data: { userId: u.id, role, workflow } });
  }
  const t = await createAccessToken(
    { db, actor: { kind: 'user', id: u.id, label: email, role } },
    { name: 'test', expiresInDays: 30 },
  );
  return { id: u.id, email, token: t.token, tokenId: t.id };
}

export interface Answer {
  status: number;
  body: Record<string, unknown> & { code?: string; field?: string; detail?: string };
}

export async function call(
  method: 'GET' | 'POST',
  path: string,
  who: Pick<Person, 'token'> | null,
  body?: unknown,
  raw?: string,
): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (who) headers.authorization = `Bearer ${who.token}`;
  const res = await dispatchApi(
    new Request(`http://ledger.test/api/v1/manage${path}`, {
      method,
      headers,
      ...(method === 'POST' ? { body: raw ?? JSON.stringify(body ?? {}) } : {}),
    }),
  );
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}
