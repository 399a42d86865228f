'use server';
// Server actions for forced replay (F1-F5, Z3): the shared Decisions of lib/manage/decisions.ts
// (operators only), whose lib/replay commands re-check the role and audit in the same transaction
// as the change. The management API runs the same objects.
import { consoleDecision } from '@/lib/auth/decision.ts';
import * as d from '@/lib/manage/decisions.ts';

export async function requestReplayAction(input: unknown) {
  return consoleDecision(d.requestReplayDecision, input);
}

export async function approveReplayAction(input: unknown) {
  return consoleDecision(d.approveReplayDecision, input);
}

export async function rejectReplayAction(input: unknown) {
  return consoleDecision(d.rejectReplayDecision, input);
}

export async function startReplayAction(input: unknown) {
  return consoleDecision(d.startReplayDecision, input);
}

export async function pauseReplayAction(input: unknown) {
  return consoleDecision(d.pauseReplayDecision, input);
}

export async function resumeReplayAction(input: unknown) {
  return consoleDecision(d.resumeReplayDecision, input);
}

export async function cancelReplayAction(input: unknown) {
  return consoleDecision(d.cancelReplayDecision, input);
}
