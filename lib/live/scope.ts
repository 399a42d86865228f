// What one viewer may learn from the change feed (Z1). The feed is shared by every page of a process,
// so each stream narrows it to the viewer's workflows: a change wholly inside them passes as it is; a
// change that also touched workflows the viewer holds no role in passes without its run ids (the page
// simply refreshes) and names only the viewer's workflows; a change wholly outside them is not sent.
import type { WorkflowScope } from '@/lib/auth/grants.ts';
import type { LiveChange } from './change.ts';

export function changeVisibleTo(change: LiveChange, scope: WorkflowScope): LiveChange | null {
  if (scope.all) return change;
  const mine = change.workflows.filter((w) => scope.workflows.includes(w));
  if (mine.length === change.workflows.length && change.workflows.length > 0) return change;
  // Too many runs to list (runs null) carry no workflow list either way: refresh, naming nothing.
  if (change.runs === null && change.workflows.length === 0) return { ...change, workflows: [] };
  if (mine.length === 0) return null;
  return { runs: null, workflows: mine, topics: change.topics };
}
