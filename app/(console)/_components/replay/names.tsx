// People and replays on the replay page are named and linked, never shown as bare ids: a person by
// email, linked to what they did on the audit trail; a replay by its short id, linked to its own place
// on the run's replay page.
import { Link } from '@/components/ui/link.tsx';

export function PersonLink({ id, users }: { id: string | null | undefined; users: Record<string, string> }) {
  if (!id) return <span>—</span>;
  const email = users[id];
  if (!email) return <span className="text-zinc-500">a person no longer in the console</span>;
  return (
    <Link className="text-blue-700 underline" href={`/audit?actor=${encodeURIComponent(email)}`} data-testid="person">
      {email}
    </Link>
  );
}

export function ReplayLink({ runId, replayId }: { runId: string; replayId: string }) {
  return (
    <Link
      className="mono font-medium text-blue-700 underline"
      href={`/runs/${runId}/replay#replay-${replayId}`}
      data-testid="replay-name"
    >
      Replay {replayId.slice(0, 8)}
    </Link>
  );
}
