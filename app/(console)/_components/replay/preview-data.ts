// What the replay page shows of its preview: how it names a target's state (lib/replay's view states)
// in the counts, the filter and the rows. The fields of a row are chosen by the page's read model
// (lib/read-models/views/replay-page.ts), which sends them to the preview's table.
export type { PreviewRow } from '@/lib/read-models/views/replay-page.ts';

export const STATE_LABEL: Record<string, string> = {
  not_sent: 'never sent',
  awaiting_claim: 'awaiting claim',
  failed: 'failed',
  in_flight: 'in flight',
  done: 'done',
  unknown: 'unknown',
  revoked: 'revoked',
  stuck: 'stuck',
};
