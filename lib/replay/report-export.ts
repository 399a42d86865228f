// A finished replay's report as a file (CSV or JSON) for the people who were not watching the console:
// the summary the report card shows and every target with its outcome, read through the report's own
// query a thousand items at a time, so a replay of any size streams in constant memory.
import type { DbOrTx } from '../db/client.ts';
import { LedgerError } from '../core/errors.ts';
import { csvCell } from '../read-models/audit-export.ts';
import { getReplayReport, type ReplayReport, type ReplayReportItem } from './progress.ts';

export const REPORT_FORMATS = ['csv', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export const REPORT_CSV_HEADER = 'target,key,epoch,outcome,state_now,note\r\n';

export function reportFormat(value: string | null): ReportFormat {
  const format = value ?? 'csv';
  if (!(REPORT_FORMATS as readonly string[]).includes(format))
    throw new LedgerError('validation', `format must be csv or json, not "${format}"`, { field: 'format' });
  return format as ReportFormat;
}

export type ReportSummary = Omit<ReplayReport, 'items' | 'nextCursor'>;

/** The report's summary, then its items page by page (the first page comes with the summary). */
export async function replayReportPages(ctx: { db: DbOrTx }, replayId: string) {
  const first = await getReplayReport(ctx, { replayId, limit: 1000 });
  const { items, nextCursor, ...summary } = first;
  async function* pages(): AsyncGenerator<ReplayReportItem[]> {
    yield items;
    for (let after = nextCursor; after;) {
      const page = await getReplayReport(ctx, { replayId, limit: 1000, after });
      yield page.items;
      after = page.nextCursor;
    }
  }
  return { summary: summary satisfies ReportSummary, pages: pages() };
}

export function reportCsvLines(items: ReplayReportItem[]): string {
  return items
    .map((i) => [i.target, i.key, i.epoch, i.outcome, i.stateNow, i.note].map(csvCell).join(',') + '\r\n')
    .join('');
}
