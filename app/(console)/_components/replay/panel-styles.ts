// A replay's statuses as the panel shows them: which are still active, each one's tone, and the
// progress bar's segments with their colours.
export const ACTIVE = ['awaiting_approval', 'approved', 'running', 'paused'];
export const TONE: Record<string, 'zinc' | 'green' | 'red' | 'amber' | 'blue'> = {
  awaiting_approval: 'amber',
  approved: 'blue',
  running: 'blue',
  paused: 'amber',
  completed: 'green',
  cancelled: 'zinc',
  rejected: 'red',
  expired: 'zinc',
};
export const SEGMENTS = [
  { k: 'sent', label: 'Sent', bar: 'bg-emerald-500' },
  { k: 'skipped', label: 'Skipped', bar: 'bg-zinc-400' },
  { k: 'failed', label: 'Failed', bar: 'bg-red-500' },
  { k: 'unknown', label: 'Unknown', bar: 'bg-purple-500' },
  { k: 'remaining', label: 'Remaining', bar: 'bg-zinc-100' },
] as const;
