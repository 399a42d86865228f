// The decision insights as a download: CSV (one line per workflow, kind and period, a workflow's
// total for the range with an empty period) or JSON (the same rows with the query they answer).
import { invalid } from '@/lib/core/errors.ts';
import { csvCell } from '@/lib/read-models/audit-export.ts';
import type { DecisionInsights, InsightRow } from '@/lib/read-models/decision-insights.ts';
import { one, type SP } from '@/lib/read-models/views/query.ts';

export const INSIGHTS_CSV_COLUMNS = [
  'workflow', 'kind', 'period', 'requested', 'approved', 'rejected', 'expired', 'cancelled', 'open',
  'approvalRate', 'medianSeconds', 'p90Seconds',
] as const satisfies readonly (keyof InsightRow)[]; // prettier-ignore

export type InsightsFormat = 'csv' | 'json';

export function insightsFormatFrom(sp: SP): InsightsFormat {
  const format = one(sp, 'format') ?? 'csv';
  if (format !== 'csv' && format !== 'json') throw invalid('format', `"format" must be csv or json, not "${format}"`);
  return format;
}

export function insightsCsv(insights: DecisionInsights): string {
  const lines = insights.rows.map((r) => INSIGHTS_CSV_COLUMNS.map((c) => csvCell(r[c])).join(','));
  return [INSIGHTS_CSV_COLUMNS.join(','), ...lines].map((l) => `${l}\r\n`).join('');
}

/** The download: its body, type and file name (the range is in the name, so two exports differ). */
export function insightsDownload(insights: DecisionInsights, format: InsightsFormat) {
  const { from, to, period } = insights.query;
  const name = `decision-insights-${period}-${from}-${to}.${format}`;
  return format === 'json'
    ? { body: JSON.stringify(insights), type: 'application/json', name }
    : { body: insightsCsv(insights), type: 'text/csv; charset=utf-8', name };
}
