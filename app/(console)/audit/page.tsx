import type { Metadata } from 'next';
import { Link } from '@/components/ui/link.tsx';
import { headers } from 'next/headers';
import { recordAuditRead } from '@/lib/audit/record-read.ts';
import { userActor } from '@/lib/auth/guard.ts';
import { requestInfoFromHeaders } from '@/lib/auth/request.ts';
import { requireViewer } from '@/lib/auth/page.ts';
import { canSomewhere } from '@/lib/auth/grants.ts';
import { AUDIT_ACTIONS } from '@/lib/audit/actions.ts';
import { auditFilterFrom, auditFilterProblem, auditPage } from '@/lib/read-models/audit.ts';
import { chainVerification, describeAge } from '@/lib/read-models/audit-chain.ts';
import { subjectNames } from '@/lib/read-models/subject-names.ts';
import { Badge } from '@/components/ui/badge.tsx';
import { linkButton } from '@/components/ui/button.tsx';
import { Card, EmptyState, PageHeader, inputClass } from '@/components/ui/card.tsx';
import { one, pageSize, withParams, type SP } from '@/components/search-params.ts';
import { RowsPerPage } from '@/components/rows-per-page.tsx';
import { auditRowView } from './audit-rows.ts';
import { AuditTable } from './audit-table.tsx';

export const metadata: Metadata = { title: 'Audit trail' };

export default async function AuditPage({ searchParams }: { searchParams: Promise<SP> }) {
  const [sp, { user, db, scope }] = await Promise.all([searchParams, requireViewer()]);
  const filter = auditFilterFrom(sp);
  const problem = auditFilterProblem(filter);
  const [page, chain] = await Promise.all([
    auditPage(db, filter, scope, one(sp, 'cursor'), pageSize(sp)),
    chainVerification(db, scope),
  ]);
  const names = await subjectNames(db, page.rows);
  // Reading the trail is itself on the trail (who looked, with which filter), written after the read so
  // the page shows the trail as it was when asked for.
  const info = requestInfoFromHeaders(await headers());
  await recordAuditRead(db, {
    actor: userActor(user),
    filter,
    cursor: one(sp, 'cursor') ?? null,
    request: { ip: info.ip, userAgent: info.userAgent, requestId: info.requestId },
  });
  const exportQuery = new URLSearchParams(
    Object.entries(filter).filter((e): e is [string, string] => Boolean(e[1])),
  ).toString();
  const canExport = canSomewhere(user.grants, 'audit.export');
  return (
    <>
      <PageHeader
        title="Audit trail"
        description="Every state change and human decision, with who, what, why, when and where (A1). Append-only and hash chained (A2)."
        actions={
          <div className="flex items-center gap-2">
            {chain.state === 'broken' ? (
              <span data-testid="chain-badge" data-ok="false" role="alert">
                <Badge tone="red">
                  Chain broken
                  {chain.at
                    ? ` at entry ${chain.at.entryId ?? '(missing)'} · ${chain.at.chain} #${chain.at.seq}: ${chain.at.problem}`
                    : ' (where is shown only with access to every workflow)'}{' '}
                  · found {describeAge(chain.ageSeconds)} ago
                </Badge>
              </span>
            ) : chain.state === 'ok' ? (
              <span data-testid="chain-badge" data-ok="true" data-stale={chain.stale || undefined}>
                <Badge tone={chain.stale ? 'amber' : 'green'}>
                  Chain verified <span title={chain.checkedAt.toISOString()}>{describeAge(chain.ageSeconds)} ago</span>
                  {chain.upToId !== null && ` up to #${BigInt(chain.upToId).toLocaleString('en-US')}`}
                  {chain.stale ? ' · verification is behind: is a worker running?' : ''}
                </Badge>
              </span>
            ) : (
              <span data-testid="chain-badge" data-ok="pending">
                <Badge tone="zinc">Chain not verified yet: the worker verifies it in the background</Badge>
              </span>
            )}
          </div>
        }
      />
      <Card className="mb-4">
        <form
          method="get"
          role="search"
          aria-label="Filter the audit trail"
          className="grid grid-cols-2 gap-3 md:grid-cols-4 lg:grid-cols-7"
        >
          {[
            ['actor', 'Actor (email or id)', 'text'],
            ['action', 'Action (any part of the name)', 'text'],
            ['run', 'Run id', 'text'],
            ['target', 'Target', 'text'],
            ['from', 'From', 'datetime-local'],
            ['to', 'To', 'datetime-local'],
          ].map(([name, label, type]) => (
            <label key={name} className="text-xs font-medium text-zinc-700">
              {label}
              <input
                name={name}
                type={type}
                list={name === 'action' ? 'audit-actions' : undefined}
                defaultValue={filter[name as keyof typeof filter] ?? ''}
                aria-invalid={problem?.field === name || undefined}
                aria-describedby={problem?.field === name ? 'audit-filter-problem' : undefined}
                className={`${inputClass} mt-1`}
              />
            </label>
          ))}
          <datalist id="audit-actions" data-testid="audit-actions">
            {Object.entries(AUDIT_ACTIONS).map(([name, spec]) => (
              <option key={name} value={name} label={spec.what} />
            ))}
          </datalist>
          <label className="text-xs font-medium text-zinc-700">
            Outcome
            <select name="outcome" defaultValue={filter.outcome ?? ''} className={`${inputClass} mt-1`}>
              <option value="">Any</option>
              <option value="ok">ok</option>
              <option value="refused">refused</option>
            </select>
          </label>
          {problem && (
            <p
              id="audit-filter-problem"
              role="alert"
              className="col-span-2 rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 md:col-span-4 lg:col-span-7"
            >
              {problem.message}
            </p>
          )}
          <div className="col-span-2 flex flex-wrap gap-2 md:col-span-4 lg:col-span-7">
            <button type="submit" className={linkButton('primary', 'sm')}>
              Apply filters
            </button>
            <Link href="/audit" className={linkButton('ghost', 'sm')}>
              Clear
            </Link>
            {canExport && (
              <>
                <a
                  href={`/api/console/audit/export?format=csv${exportQuery ? `&${exportQuery}` : ''}`}
                  className={linkButton('secondary', 'sm')}
                  data-testid="export-csv"
                  download
                >
                  Download CSV
                </a>
                <a
                  href={`/api/console/audit/export?format=jsonl${exportQuery ? `&${exportQuery}` : ''}`}
                  className={linkButton('secondary', 'sm')}
                  download
                >
                  Download JSON Lines
                </a>
              </>
            )}
          </div>
        </form>
      </Card>
      <Card>
        {page.rows.length === 0 ? (
          <EmptyState title="No entry matches">
            Loosen a filter: actions and actors match by any part of their name or email.
          </EmptyState>
        ) : (
          <AuditTable rows={page.rows.map((r) => auditRowView(r, names))} />
        )}
        <div className="mt-3 flex flex-wrap items-center justify-between gap-2">
          {one(sp, 'cursor') ? (
            <Link href={withParams('/audit', sp, { cursor: undefined })} className={linkButton('secondary', 'sm')}>
              Newest
            </Link>
          ) : (
            <span />
          )}
          <RowsPerPage path="/audit" sp={sp} />
          {page.next && (
            <Link href={withParams('/audit', sp, { cursor: page.next })} className={linkButton('secondary', 'sm')}>
              Older entries
            </Link>
          )}
        </div>
      </Card>
    </>
  );
}
