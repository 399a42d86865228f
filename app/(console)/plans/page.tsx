import type { Metadata } from 'next';
import { Link } from '@/components/ui/link.tsx';
import { requireViewer } from '@/lib/auth/page.ts';
import { submittedPlans } from '@/lib/read-models/admin.ts';
import { Card, EmptyState, PageHeader } from '@/components/ui/card.tsx';
import { Time } from '@/components/time.tsx';
import { LiveRefresh } from '@/components/live/live-refresh.tsx';

export const metadata: Metadata = { title: 'Plans to approve' };

export default async function PlansPage() {
  const { db, scope } = await requireViewer();
  const plans = await submittedPlans(db, scope);
  return (
    <>
      <PageHeader
        title="Plans to approve"
        description="Submitted plans, oldest first. Approving one freezes its target set (P1); where the tool asks for it the approver must not be the author (P2)."
      />
      <LiveRefresh topics={['plan']} />
      <Card>
        {plans.length === 0 ? (
          <EmptyState title="No plan is waiting">
            Plans arrive when a runtime submits a run&apos;s intended targets.
          </EmptyState>
        ) : (
          <ul className="divide-y divide-zinc-100">
            {plans.map((p) => (
              <li key={p.id} className="flex flex-wrap items-center justify-between gap-2 py-2.5 text-sm">
                <div>
                  <Link href={`/runs/${p.runId}/plan`} className="font-medium text-blue-700 hover:underline">
                    {p.run.workflow} · {p.run.event.triggerId}
                  </Link>
                  <div className="text-xs text-zinc-500">
                    {p.itemCount.toLocaleString('en-US')} targets · by {p.authorLabel} · <Time value={p.submittedAt} />
                  </div>
                </div>
                <Link href={`/runs/${p.runId}/plan`} className="text-sm text-blue-700 underline">
                  Review
                </Link>
              </li>
            ))}
          </ul>
        )}
      </Card>
    </>
  );
}
