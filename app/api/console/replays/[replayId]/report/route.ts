// A replay's report as a download: CSV (one row per target) or JSON (the summary and every target).
// Read-only, for anyone holding a role in the replay's workflow (to anyone else it is missing, Z1); a
// bad format is a 422 naming it.
import { consoleRoute } from '@/lib/api/console-route.ts';
import { assertVisible } from '@/lib/auth/guard.ts';
import { replayReportPages, REPORT_CSV_HEADER, reportCsvLines, reportFormat } from '@/lib/replay/report-export.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute<{ params: Promise<{ replayId: string }> }>(
  'console.read',
  { mutating: false },
  async (g, req, ctx) => {
    const { replayId } = await ctx.params;
    const format = reportFormat(new URL(req.url).searchParams.get('format'));
    await assertVisible(g, 'replay', replayId);
    const { summary, pages } = await replayReportPages(g, replayId);
    const encoder = new TextEncoder();
    let firstItem = true;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const head = format === 'csv' ? REPORT_CSV_HEADER : `{"report":${JSON.stringify(summary)},"items":[`;
        controller.enqueue(encoder.encode(head));
      },
      async pull(controller) {
        const next = await pages.next();
        if (next.done) {
          if (format === 'json') controller.enqueue(encoder.encode(']}\n'));
          return controller.close();
        }
        if (format === 'csv') return controller.enqueue(encoder.encode(reportCsvLines(next.value)));
        const chunk = next.value.map((item) => {
          const text = `${firstItem ? '' : ','}\n${JSON.stringify(item)}`;
          firstItem = false;
          return text;
        });
        controller.enqueue(encoder.encode(chunk.join('')));
      },
      async cancel() {
        await pages.return(undefined);
      },
    });
    return new Response(stream, {
      headers: {
        'Content-Type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
        'Content-Disposition': `attachment; filename="replay-${replayId}.${format}"`,
        'Cache-Control': 'no-store',
      },
    });
  },
);
