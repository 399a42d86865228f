// Decision insights as a download: CSV by default, JSON with ?format=json; the same figures as the
// insights page, filtered to the person's workflows (Z1). A bad parameter is a 422 naming it.
import { consoleRoute } from '@/lib/api/console-route.ts';
import { decisionInsights, insightsQueryFrom } from '@/lib/read-models/decision-insights.ts';
import { insightsDownload, insightsFormatFrom } from '@/lib/read-models/decision-insights-export.ts';
import { searchParamsOf } from '@/lib/read-models/views/query.ts';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute('console.read', { mutating: false }, async (g, req) => {
  const sp = searchParamsOf(new URL(req.url).searchParams);
  const format = insightsFormatFrom(sp);
  const file = insightsDownload(await decisionInsights(g.db, g.scope, insightsQueryFrom(sp)), format);
  return new Response(file.body, {
    headers: {
      'content-type': file.type,
      'content-disposition': `attachment; filename="${file.name}"`,
      'cache-control': 'no-store',
    },
  });
});
