import type { Metadata } from 'next';
import Link from 'next/link';
import { requireViewer } from '@/lib/auth/page.ts';
import { canSomewhere } from '@/lib/auth/grants.ts';
import { supportQueue } from '@/lib/read-models/support.ts';
import { EffectActions } from '@/app/(console)/_components/effect-actions.tsx';
import { linkButton } from '@/components/ui/button.tsx';
import { Card, EmptyState, PageHeader } from '@/components/ui/card.tsx';
import { Time } from '@/components/time.tsx';
import { one, type SP } from '@/components/search-params.ts';

export const metadata: Metadata = { title: 'Support queue' };

export default async function SupportPage({ searchParams }: { searchParams: Promise<SP> }) {
  const [sp, { user, db, scope }] = await Promise.all([searchParams, requireViewer()]);
  const q = await supportQueue(db, scope, { cursor: one(sp, 'cursor') });
  const canResolve = canSomewhere(user.grants, 'effect.resolve');
  return (
    <>
      <PageHeader
        title="Support queue"
        description={`Every unknown key across runs, oldest first (${q.total.toLocaleString('en-US')} open). Unknowns are never retried automatically (S4): resolve each as sent (with a receipt or evidence) or not sent.`}
      />
      <Card>
        {q.rows.length === 0 ? (
          <EmptyState title="Nothing to resolve">
            No key is in the unknown state. Keys land here when a call ends ambiguously or a lease expires without a
            receipt.
          </EmptyState>
        ) : (
          <ul className="divide-y divide-zinc-100">
            {q.rows.map((r) => (
              <li
                key={r.key}
                className="flex flex-wrap items-start justify-between gap-3 py-3"
                data-testid="unknown-row"
              >
                <div className="min-w-0 text-sm">
                  <Link
                    href={`/target?key=${encodeURIComponent(r.key)}`}
                    className="font-medium text-blue-700 hover:underline"
                  >
                    {r.target}
                  </Link>
                  <div className="text-xs text-zinc-500">
                    {r.tool} · {r.action} · epoch {r.epoch} · unknown since <Time value={r.since} /> · set by{' '}
                    {r.changedBy} · run{' '}
                    <Link href={`/runs/${r.runId}`} className="mono underline">
                      {r.runId.slice(0, 8)}
                    </Link>
                  </div>
                  <div className="mt-1 text-xs">
                    {r.evidence ? (
                      <span>
                        What reconciliation found ({r.evidenceBy}, <Time value={r.evidenceAt} />
                        ): <code className="rounded bg-zinc-100 px-1">{JSON.stringify(r.evidence).slice(0, 300)}</code>
                      </span>
                    ) : (
                      <span className="text-zinc-500">No reconciliation evidence yet.</span>
                    )}
                  </div>
                </div>
                <EffectActions
                  effectKey={r.key}
                  target={r.target}
                  state="unknown"
                  epoch={r.epoch}
                  changedBy={r.changedBy}
                  canResolve={canResolve}
                  canRevoke={false}
                  canBump={false}
                  refreshBehind={false}
                />
              </li>
            ))}
          </ul>
        )}
        <div className="mt-3 flex justify-between">
          {one(sp, 'cursor') ? (
            <Link href="/support" className={linkButton('secondary', 'sm')}>
              Oldest first
            </Link>
          ) : (
            <span />
          )}
          {q.next && (
            <Link href={`/support?cursor=${q.next}`} className={linkButton('secondary', 'sm')}>
              Next page
            </Link>
          )}
        </div>
      </Card>
    </>
  );
}
