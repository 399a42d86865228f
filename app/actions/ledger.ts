'use server';
// Server actions for the ledger decisions. Each runs the shared Decision (lib/manage/decisions.ts):
// parse with the command's schema, authorize on the server with the permission table
// (lib/auth/guard.ts), refuse a decision without its version (Z8), delegate to the lib command,
// which audits in the same transaction as the change. The management API runs the same objects.
import { consoleDecision } from '@/lib/auth/decision.ts';
import * as d from '@/lib/manage/decisions.ts';

export async function rejectPlanAction(input: unknown) {
  return consoleDecision(d.rejectPlanDecision, input);
}

export async function approvePlanAction(input: unknown) {
  return consoleDecision(d.approvePlanDecision, input);
}

export async function revokeAction(input: unknown) {
  return consoleDecision(d.revokeEffectsDecision, input);
}

export async function resolveUnknownAction(input: unknown) {
  return consoleDecision(d.resolveUnknownDecision, input);
}

export async function resolveManyAction(input: unknown) {
  return consoleDecision(d.resolveManyDecision, input);
}

export async function requestBumpAction(input: unknown) {
  return consoleDecision(d.requestBumpDecision, input);
}

export async function decideBumpAction(input: unknown) {
  return consoleDecision(d.decideBumpDecision, input);
}
