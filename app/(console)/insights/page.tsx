import type { Metadata } from 'next';
import { requireViewer } from '@/lib/auth/page.ts';
import {
  decisionInsights,
  DEFAULT_RANGE_DAYS,
  insightsQueryOrProblem,
  type InsightRow,
} from '@/lib/read-models/decision-insights.ts';
import { Card, EmptyState, Field, inputClass, PageHeader } from '@/components/ui/card.tsx';
import { Button, linkButton } from '@/components/ui/button.tsx';
import { one, type SP } from '@/components/search-params.ts';
import { InsightsTable } from './insights-table.tsx';

export const metadata: Metadata = { title: 'Decision insights' };

function byWorkflow(rows: InsightRow[]): [string, InsightRow[]][] {
  const groups = new Map<string, InsightRow[]>();
  for (const r of rows) groups.set(r.workflow, [...(groups.get(r.workflow) ?? []), r]);
  return [...groups];
}

export default async function InsightsPage({ searchParams }: { searchParams: Promise<SP> }) {
  const [sp, { db, scope }] = await Promise.all([searchParams, requireViewer()]);
  const { query, problem } = insightsQueryOrProblem(sp);
  const insights = query ? await decisionInsights(db, scope, query) : null;
  const shown = query ?? { period: one(sp, 'period') ?? 'day', from: one(sp, 'from') ?? '', to: one(sp, 'to') ?? '' };
  const download = (format: 'csv' | 'json') =>
    `/api/console/insights?${new URLSearchParams({ ...(query ?? {}), ...(format === 'json' ? { format } : {}) })}`;
  const errorOf = (field: string) => (problem?.field === field ? problem.message : null);
  return (
    <>
      <PageHeader
        title="Decision insights"
        description={`How four-eyes requests and plan approvals are decided, per workflow and period of the request (UTC): the last ${DEFAULT_RANGE_DAYS} days unless you choose a range. The approval rate is approved over decided; the times to decide count approved and rejected ones.`}
        actions={
          query && (
            <>
              <a className={linkButton('secondary', 'sm')} href={download('csv')} data-testid="insights-csv">
                Download CSV
              </a>
              <a className={linkButton('secondary', 'sm')} href={download('json')}>
                Download JSON
              </a>
            </>
          )
        }
      />
      <Card className="mb-4">
        <form method="get" className="flex flex-wrap items-end gap-3" data-testid="insights-filter">
          <Field label="Period" htmlFor="period" error={errorOf('period')}>
            <select id="period" name="period" defaultValue={shown.period} className={inputClass}>
              <option value="day">Day</option>
              <option value="week">ISO week</option>
            </select>
          </Field>
          <Field label="From" htmlFor="from" error={errorOf('from')}>
            <input id="from" name="from" type="date" defaultValue={shown.from} className={inputClass} />
          </Field>
          <Field label="To" htmlFor="to" error={errorOf('to')}>
            <input id="to" name="to" type="date" defaultValue={shown.to} className={inputClass} />
          </Field>
          <Button type="submit" size="md">
            Show
          </Button>
        </form>
      </Card>
      {insights && insights.rows.length === 0 && (
        <EmptyState title="No decisions asked for in this range">
          Requests appear here when an operator asks for an epoch bump or a replay, or a plan is submitted.
        </EmptyState>
      )}
      <div className="space-y-4">
        {insights &&
          byWorkflow(insights.rows).map(([workflow, rows]) => (
            <InsightsTable key={workflow} workflow={workflow} rows={rows} />
          ))}
      </div>
    </>
  );
}
