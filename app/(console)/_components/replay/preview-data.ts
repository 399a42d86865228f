// What the replay page shows of its preview: how it names a target's state (lib/replay's view states)
// in the counts, the filter and the rows, and the fields of a row it sends to the preview's table.
import type { PreviewItem } from '@/lib/replay/preview.ts';

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

/** A preview row as the page sends it: what the table shows, nothing more. */
export type PreviewRow = Pick<
  PreviewItem,
  'itemId' | 'key' | 'target' | 'recordId' | 'state' | 'epoch' | 'changedBy' | 'changedAt' | 'willSend' | 'skipReason'
>;

export function previewRow(i: PreviewItem): PreviewRow {
  return {
    itemId: i.itemId,
    key: i.key,
    target: i.target,
    recordId: i.recordId,
    state: i.state,
    epoch: i.epoch,
    changedBy: i.changedBy,
    changedAt: i.changedAt,
    willSend: i.willSend,
    skipReason: i.skipReason,
  };
}
