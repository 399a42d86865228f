import type { Metadata } from 'next';
import { Link } from '@/components/ui/link.tsx';
import { requireViewer } from '@/lib/auth/page.ts';
import { canOn } from '@/lib/auth/grants.ts';
import { plannedTarget, targetDetail } from '@/lib/read-models/target.ts';
import { EffectActions } from '@/app/(console)/_components/effect-actions.tsx';
import { StateBadge } from '@/components/ui/badge.tsx';
import { Card, EmptyState, PageHeader } from '@/components/ui/card.tsx';
import { Time } from '@/components/time.tsx';
import { FieldList } from '@/components/ui/fields.tsx';
import { one, type SP } from '@/components/search-params.ts';

export const metadata: Metadata = { title: 'Target' };

export default async function TargetPage({ searchParams }: { searchParams: Promise<SP> }) {
  const [sp, { user, db, scope }] = await Promise.all([searchParams, requireViewer()]);
  const key = one(sp, 'key');
  const detail = key ? await targetDetail(db, key, scope) : null;
  if (!detail) {
    const planned = key ? await plannedTarget(db, key, scope) : null;
    if (planned)
      return (
        <PlannedTarget
          planned={planned}
          canRevoke={planned.planApproved && canOn(user.grants, 'effect.revoke', planned.workflow)}
        />
      );
    return (
      <>
        <PageHeader title="Target" />
        <EmptyState title="No effect with this key">
          It may never have been claimed: approved targets without an effect show as &quot;never sent&quot; on their
          run.
        </EmptyState>
      </>
    );
  }
  const { head } = detail;
  return (
    <>
      <PageHeader
        title={head.target}
        description={
          <span>
            {head.tool} · {head.action} · record <span className="mono">{head.recordId}</span> · run{' '}
            <Link className="text-blue-700 underline" href={`/runs/${head.runId}`}>
              {detail.workflow} · {head.triggerId}
            </Link>
          </span>
        }
        actions={
          <EffectActions
            effectKey={head.key}
            target={head.target}
            state={head.state}
            epoch={head.currentEpoch}
            changedBy={head.changedBy}
            changedAt={head.changedAt}
            canRevoke={canOn(user.grants, 'effect.revoke', detail.workflow)}
            canBump={canOn(user.grants, 'effect.bump.request', detail.workflow)}
            canResolve={canOn(user.grants, 'effect.resolve', detail.workflow)}
          />
        }
      />
      <Card className="mb-4 min-w-0" title="Current">
        <div className="flex flex-wrap items-center gap-4 text-sm">
          <span data-testid="current-state">
            <StateBadge state={head.state} />
          </span>
          <span>
            epoch <b>{head.currentEpoch}</b>
          </span>
          <span>
            last changed by <b>{head.changedBy}</b> at <Time value={head.changedAt} />
          </span>
        </div>
        <p className="mono mt-2 break-all text-xs text-zinc-500">key {head.key}</p>
      </Card>
      {detail.epochs.map((e) => (
        <Card
          key={e.id}
          className="mb-4 min-w-0"
          title={
            <span className="flex items-center gap-2">
              Epoch {e.epoch} <StateBadge state={e.state} />
            </span>
          }
          description={
            <span className="break-all">
              idempotency key <span className="mono">{e.idempotencyKey}</span>
              {e.receipt ? (
                <>
                  {' '}
                  · receipt <span className="mono">{e.receipt}</span>
                </>
              ) : null}
            </span>
          }
        >
          <h3 className="mb-2 text-xs font-semibold uppercase tracking-wide text-zinc-500">Transitions</h3>
          <ol className="mb-4 space-y-2">
            {e.transitions.map((t) => (
              <li
                key={t.id}
                className="min-w-0 rounded-md border border-zinc-100 px-3 py-2 text-sm"
                data-testid="transition"
              >
                <div className="flex flex-wrap items-center gap-2">
                  {t.from ? (
                    <StateBadge state={t.from} />
                  ) : (
                    <span className="text-xs text-zinc-500">
                      {t.evidence && typeof t.evidence === 'object' && 'supersedes' in t.evidence
                        ? `new epoch (supersedes ${String((t.evidence as { supersedes: unknown }).supersedes)})`
                        : 'first claim'}
                    </span>
                  )}{' '}
                  → <StateBadge state={t.to} />
                  <span className="text-zinc-600">
                    by <b>{t.actor}</b>
                    {t.role ? ` (${t.role})` : ` (${t.actorKind})`}
                  </span>
                  <span className="text-xs text-zinc-500">
                    <Time value={t.at} />
                  </span>
                </div>
                {t.reason && <p className="mt-1 text-zinc-700">Why: {t.reason}</p>}
                {t.evidence ? <FieldList value={t.evidence} className="mt-1 rounded bg-zinc-50 p-2 text-xs" /> : null}
              </li>
            ))}
          </ol>
          <h3 className="mb-2 text-xs font-semibold uppercase tracking-wide text-zinc-500">
            Attempts ({e.attempts.length})
          </h3>
          {e.attempts.length === 0 ? (
            <p className="text-sm text-zinc-500">No provider call at this epoch.</p>
          ) : (
            e.attempts.map((a) => (
              <details
                key={a.id}
                className="mb-2 min-w-0 rounded-md border border-zinc-200"
                open={e.attempts.length === 1}
              >
                <summary className="cursor-pointer px-3 py-2 text-sm">
                  Attempt <span className="mono text-xs">{a.id.slice(0, 8)}</span> · started{' '}
                  <Time value={a.startedAt} /> ·{' '}
                  {a.status === null ? (
                    'no response recorded'
                  ) : (
                    <>
                      HTTP <b>{a.status}</b> at <Time value={a.respondedAt} />
                    </>
                  )}
                </summary>
                {a.status !== null && (
                  <div className="grid gap-3 border-t border-zinc-100 p-3 lg:grid-cols-2 [&>div]:min-w-0">
                    <div>
                      <h4 className="mb-1 text-xs font-medium text-zinc-500">Pretty</h4>
                      <pre className="max-h-80 overflow-auto rounded bg-zinc-900 p-2 text-xs text-zinc-100">
                        {a.body.pretty ?? a.body.text ?? `(binary, ${a.body.size} bytes)`}
                      </pre>
                    </div>
                    <div>
                      <h4 className="mb-1 text-xs font-medium text-zinc-500">
                        Verbatim (status, headers in order, body as received)
                      </h4>
                      <pre
                        className="max-h-80 overflow-auto rounded bg-zinc-50 p-2 text-xs"
                        data-testid="raw-response"
                      >{`HTTP ${a.status}\n${(a.headers ?? []).map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${a.body.text ?? `base64:${a.body.base64 ?? ''}`}`}</pre>
                    </div>
                  </div>
                )}
              </details>
            ))
          )}
        </Card>
      ))}
      <Card title="Audit entries for this key">
        {detail.audit.length === 0 ? (
          <p className="text-sm text-zinc-500">None.</p>
        ) : (
          <ul className="divide-y divide-zinc-100 text-sm">
            {detail.audit.map((a) => (
              <li key={a.id} className="py-1.5">
                <Time value={a.at} /> · <b>{a.action}</b> · {a.actorLabel}
                {a.actorRole ? ` (${a.actorRole})` : ''} · {a.outcome}
                {a.reason ? ` · “${a.reason}”` : ''}
              </li>
            ))}
          </ul>
        )}
      </Card>
    </>
  );
}

/** A target in a plan that nobody has claimed: nothing was sent, and an operator may keep it out of
 *  every replay by revoking it now (S5). */
function PlannedTarget({
  planned,
  canRevoke,
}: {
  planned: NonNullable<Awaited<ReturnType<typeof plannedTarget>>>;
  canRevoke: boolean;
}) {
  return (
    <>
      <PageHeader
        title={planned.target}
        description={
          <span>
            {planned.tool} · {planned.action} · record <span className="mono">{planned.recordId}</span> · run{' '}
            <Link className="text-blue-700 underline" href={`/runs/${planned.runId}`}>
              {planned.workflow} · {planned.triggerId}
            </Link>
          </span>
        }
        actions={
          <EffectActions
            effectKey={planned.key}
            target={planned.target}
            state="none"
            epoch={1}
            changedBy="nobody yet"
            changedAt={null}
            canRevoke={canRevoke}
            canBump={false}
            canResolve={false}
          />
        }
      />
      <Card className="mb-4 min-w-0" title="Current">
        <div className="flex flex-wrap items-center gap-4 text-sm">
          <span data-testid="current-state">
            <StateBadge state={null} />
          </span>
          <span>
            {planned.planApproved
              ? 'Approved in the plan, never claimed: nothing was sent to it.'
              : 'In a plan that is not approved yet: nothing was sent to it.'}
          </span>
        </div>
        <p className="mono mt-2 break-all text-xs text-zinc-500">key {planned.key}</p>
      </Card>
    </>
  );
}
