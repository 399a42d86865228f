'use server';
// The signed-in person's personal access tokens for the management API (docs/MANAGE.md): created
// (shown once) and revoked through the shared Decisions, audited by their commands.
import { revalidatePath } from 'next/cache';
import { consoleDecision } from '@/lib/auth/decision.ts';
import * as d from '@/lib/manage/admin-decisions.ts';

export async function createAccessTokenAction(input: unknown) {
  const result = await consoleDecision(d.createAccessTokenDecision, input);
  revalidatePath('/account/tokens');
  return result;
}

export async function revokeAccessTokenAction(input: unknown) {
  const result = await consoleDecision(d.revokeAccessTokenDecision, input);
  revalidatePath('/account/tokens');
  return result;
}
