// Step 1 of an item: the outcome of an item that needs no send, from its window row. A target whose
// state changed since the operator confirmed the set is skipped and reported (F4); a target this
// replay claimed before (a handler that crashed, or a chunk pg-boss ran twice) takes the outcome its
// key shows now. Null: the item goes on to its claim.
import type { Actor } from '../ledger/index.ts';
import type { ItemOutcome } from './item-outcome.ts';
import type { ItemRow } from './item-window.ts';

export function outcomeWithoutSend(item: ItemRow, actor: Actor): { outcome: ItemOutcome; note: string } | null {
  const frozen = item.note?.startsWith('frozen:') ? item.note.slice(7) : null;
  if (!item.ours) {
    if (item.fp === frozen) return null;
    return {
      outcome: 'skipped',
      note: `changed after confirmation: now ${item.view_state} by ${item.changed_by ?? 'nobody'} (was ${frozen}) (F4)`,
    };
  }
  // This replay claimed the key before (a handler that crashed or ran twice).
  switch (item.view_state) {
    case 'failed':
      if (item.changed_by !== actor.label) {
        return {
          outcome: 'skipped',
          note: `changed after confirmation: failed by ${item.changed_by} after this replay's attempt (F4)`,
        };
      }
      return null; // our own freed claim (provider unreachable): claim again
    case 'in_flight':
      if (item.changed_by === actor.label)
        return {
          outcome: 'interrupted',
          note: 'claimed by this replay, no outcome recorded: the reconciler decides after the lease (S4)',
        };
      return { outcome: 'skipped', note: `claimed by ${item.changed_by} after this replay's attempt` };
    case 'done':
      return { outcome: 'sent', note: item.receipt ? `receipt ${item.receipt}` : 'done, no receipt on record' };
    case 'unknown':
      return { outcome: 'unknown', note: `unknown: ${item.changed_by} decided after this replay's attempt` };
    case 'stuck':
      return { outcome: 'failed', note: 'stuck (S6)' };
    case 'not_sent':
    case 'awaiting_claim':
    case 'revoked':
      return {
        outcome: 'skipped',
        note: `changed after this replay's attempt: ${item.view_state} by ${item.changed_by}`,
      };
    default:
      return item.view_state satisfies never;
  }
}
