// Forced replay (F1-F5, Z3) and reconciliation (C1-C3): the console calls these; docs/REPLAY.md.
export {
  previewReplay,
  previewReplayInput,
  fourEyesFor,
  type ReplayPreview,
  type PreviewItem,
  type PreviewReplayInput,
} from './preview.ts';
export { requestReplay, requestReplayInput, type ReplayCtx, type RequestReplayResult } from './request.ts';
export { approveReplay, approveReplayInput, rejectReplay, rejectReplayInput } from './approval.ts';
export {
  startReplay,
  pauseReplay,
  resumeReplay,
  cancelReplay,
  replayControlInput,
  cancelReplayInput,
  type ControlCtx,
  type ReplayStatus,
} from './control.ts';
export {
  getReplayProgress,
  listReplays,
  getReplayReport,
  replayProgressInput,
  listReplaysInput,
  replayReportInput,
  type ReplayProgress,
  type ReplayReport,
  type ReplayReportItem,
} from './progress.ts';
export { VIEW_STATES, ELIGIBLE, skipReason, exactlyOnce, type ViewState } from './set.ts';
export { installJobEngine, jobEngineInstalled, startBoss, REPLAY_QUEUE, type JobSender } from './jobs.ts';
export { reconcileOnce, reconcilerActor, type ReconcileResult } from './reconcile.ts';
export { startReplayWorker, type ReplayWorker, type WorkerOptions } from './worker.ts';
export { executorActor } from './executor.ts';
