'use server';
// Admin server actions (Z1: admin only): the shared Decisions of lib/manage/decisions.ts, each
// authorized by the guard and audited by its command. The management API runs the same objects.
import { consoleDecision } from '@/lib/auth/decision.ts';
import * as d from '@/lib/manage/admin-decisions.ts';

export async function createUserAction(input: unknown) {
  return consoleDecision(d.createUserDecision, input);
}

export async function updateUserAction(input: unknown) {
  return consoleDecision(d.updateUserDecision, input);
}

export async function createRuntimeKeyAction(input: unknown) {
  return consoleDecision(d.createRuntimeKeyDecision, input);
}

export async function revokeRuntimeKeyAction(input: unknown) {
  return consoleDecision(d.revokeRuntimeKeyDecision, input);
}

export async function saveToolAction(input: unknown) {
  return consoleDecision(d.saveToolDecision, input);
}

export async function addGrantAction(input: unknown) {
  return consoleDecision(d.addGrantDecision, input);
}

export async function removeGrantAction(input: unknown) {
  return consoleDecision(d.removeGrantDecision, input);
}
