'use client';
// The audit trail (A1, A2): every entry the filter matches, newest first, one page at a time; the
// chain's background verification with its age; the export of what the filter finds. Read from the
// trail's view, which records the read on the trail itself.
import { Link } from '@/components/ui/link.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import { linkButton } from '@/components/ui/button.tsx';
import { Card, EmptyState, PageHeader, inputClass } from '@/components/ui/card.tsx';
import { one, withParams, type SP } from '@/components/search-params.ts';
import { RowsPerPage } from '@/components/rows-per-page.tsx';
import { PageView } from '@/components/views/page-view.tsx';
// The catalogue is plain data (its one import is a type): the action list ships with the page's
// script, once, rather than in every answer of the view.
import { AUDIT_ACTIONS } from '@/lib/audit/actions.ts';
import type { AuditPage } from '@/lib/read-models/views/audit-page.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { AuditTable } from './audit-table.tsx';

export function AuditView() {
  return <PageView<AuditPage> view="audit" title="Audit trail" Body={AuditBody} />;
}

/** The page itself, drawn from its view (also what the escaping proof renders). */
export function AuditBody({ view, sp }: { view: Wire<AuditPage>; sp: SP }) {
  const { filter, problem, rows, next, canExport } = view;
  // The export takes the same filter as the page, fields left empty left out.
  const exportQuery = new URLSearchParams(
    Object.entries(filter).filter((e): e is [string, string] => Boolean(e[1])),
  ).toString();
  return (
    <>
      <PageHeader
        title="Audit trail"
        description="Every state change and human decision, with who, what, why, when and where (A1). Append-only and hash chained (A2)."
        actions={
          <div className="flex items-center gap-2">
            <ChainBadge chain={view.chain} age={view.chainAge} />
          </div>
        }
      />
      <Card className="mb-4">
        {/* Keyed by the filter applied: after Back or Clear the inputs show the address's filter. */}
        <form
          key={JSON.stringify(filter)}
          method="get"
          role="search"
          aria-label="Filter the audit trail"
          className="grid grid-cols-2 gap-3 md:grid-cols-4 lg:grid-cols-7"
        >
          {[
            ['actor', 'Actor (email or id)', 'text'],
            ['action', 'Action (any part of the name)', 'text'],
            ['run', 'Run id (or its first 8 characters)', 'text'],
            ['target', 'Target (recipient or key)', 'text'],
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
        {rows.length === 0 ? (
          <EmptyState title="No entry matches">
            Loosen a filter: actions and actors match by any part of their name or email.
          </EmptyState>
        ) : (
          <AuditTable rows={rows} />
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
          {next && (
            <Link href={withParams('/audit', sp, { cursor: next })} className={linkButton('secondary', 'sm')}>
              Older entries
            </Link>
          )}
        </div>
      </Card>
    </>
  );
}

/** The chain's verification as the background job stored it (A2), with its age: where a break is and
 *  how far the trail was verified only for a viewer who may see those entries (Z1, the view says). */
function ChainBadge({ chain, age }: { chain: Wire<AuditPage>['chain']; age: string | null }) {
  if (chain.state === 'broken')
    return (
      <span data-testid="chain-badge" data-ok="false" role="alert">
        <Badge tone="red">
          Chain broken
          {chain.at
            ? ` at entry ${chain.at.entryId ?? '(missing)'} · ${chain.at.chain} #${chain.at.seq}: ${chain.at.problem}`
            : ' (where is shown only with access to every workflow)'}{' '}
          · found {age} ago
        </Badge>
      </span>
    );
  if (chain.state === 'ok')
    return (
      <span data-testid="chain-badge" data-ok="true" data-stale={chain.stale || undefined}>
        <Badge tone={chain.stale ? 'amber' : 'green'}>
          Chain verified <span title={chain.checkedAt}>{age} ago</span>
          {chain.upToId !== null && ` up to #${BigInt(chain.upToId).toLocaleString('en-US')}`}
          {chain.stale ? ' · verification is behind: is a worker running?' : ''}
        </Badge>
      </span>
    );
  return (
    <span data-testid="chain-badge" data-ok="pending">
      <Badge tone="zinc">Chain not verified yet: the worker verifies it in the background</Badge>
    </span>
  );
}
