'use server';
// Server actions for forced replay (F1-F5, Z3). Each one: parse with the lib's zod schema, authorize
// on the server with the permission table (operators only), delegate to lib/replay, whose commands
// re-check the role and audit in the same transaction as the change.
import { consoleAction } from '@/lib/auth/guard.ts';
import { seenField } from '@/lib/ledger/seen-required.ts';
import {
  approveReplay,
  approveReplayInput,
  cancelReplay,
  cancelReplayInput,
  getReplayProgress,
  pauseReplay,
  rejectReplay,
  rejectReplayInput,
  replayControlInput,
  requestReplay,
  requestReplayInput,
  resumeReplay,
  startReplay,
} from '@/lib/replay/index.ts';

export async function requestReplayAction(input: unknown) {
  return consoleAction(
    'replay.request',
    requestReplayInput,
    input,
    (g, i) => requestReplay(g, i),
    (i) => ({ type: 'run', id: i.runId, runId: i.runId }),
    { seen: seenField('setHash', "set's hash from the preview") },
  );
}

export async function approveReplayAction(input: unknown) {
  return consoleAction(
    'replay.approve',
    approveReplayInput,
    input,
    (g, i) => approveReplay(g, i),
    (i) => ({ type: 'approval', id: i.approvalRequestId }),
    { seen: seenField('seenStatus', "request's status") },
  );
}

export async function rejectReplayAction(input: unknown) {
  return consoleAction(
    'replay.approve',
    rejectReplayInput,
    input,
    (g, i) => rejectReplay(g, i),
    (i) => ({ type: 'approval', id: i.approvalRequestId }),
    { seen: seenField('seenStatus', "request's status") },
  );
}

export async function startReplayAction(input: unknown) {
  return consoleAction(
    'replay.control',
    replayControlInput,
    input,
    (g, i) => startReplay(g, i),
    (i) => ({ type: 'replay', id: i.replayId }),
    { seen: seenField('seenStatus', "replay's status") },
  );
}

export async function pauseReplayAction(input: unknown) {
  return consoleAction(
    'replay.control',
    replayControlInput,
    input,
    (g, i) => pauseReplay(g, i),
    (i) => ({ type: 'replay', id: i.replayId }),
    { seen: seenField('seenStatus', "replay's status") },
  );
}

export async function resumeReplayAction(input: unknown) {
  return consoleAction(
    'replay.control',
    replayControlInput,
    input,
    (g, i) => resumeReplay(g, i),
    (i) => ({ type: 'replay', id: i.replayId }),
    { seen: seenField('seenStatus', "replay's status") },
  );
}

export async function cancelReplayAction(input: unknown) {
  return consoleAction(
    'replay.control',
    cancelReplayInput,
    input,
    async (g, i) => {
      const result = await cancelReplay(g, i);
      return { ...result, progress: await getReplayProgress(g, { replayId: i.replayId }) };
    },
    (i) => ({ type: 'replay', id: i.replayId }),
    { seen: seenField('seenStatus', "replay's status") },
  );
}
