// Who acts on the ledger. Every command takes an actor; the audit entry names it (A1).
import type { Role } from '../db/generated/enums.ts';

export type { Role };

export type Actor =
  | { kind: 'user'; id: string; label: string; role: Role }
  | { kind: 'runtime'; id: string; label: string; workflows: string[] }
  | { kind: 'executor'; id: string; label: string }
  | { kind: 'reconciler'; id: string; label: string }
  | { kind: 'policy'; id: string; label: string }
  | { kind: 'system'; id: string; label: string };

/** Where a request came from (A1: where). */
export interface RequestMeta {
  ip?: string | null;
  userAgent?: string | null;
  requestId?: string | null;
}

/** The party the transition table speaks of: a console role, or a kind of machine actor. */
export type Party = Role | 'runtime' | 'executor' | 'reconciler' | 'policy' | 'system';

export function partyOf(actor: Actor): Party {
  return actor.kind === 'user' ? actor.role : actor.kind;
}

export function actorRole(actor: Actor): string | null {
  return actor.kind === 'user' ? actor.role : null;
}

export function requestJson(request?: RequestMeta): Record<string, string | null> {
  return { ip: request?.ip ?? null, userAgent: request?.userAgent ?? null, requestId: request?.requestId ?? null };
}
