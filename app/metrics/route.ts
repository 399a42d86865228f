// Prometheus metrics of this process (lib/ops/metrics.ts), in the text exposition format. Meant for
// the internal network; with METRICS_TOKEN set, a scraper must send it as a bearer token.
import { problem, problemResponse } from '@/lib/api/problem.ts';
import { env } from '@/lib/env.ts';
import { scrape } from '@/lib/ops/probes.ts';

export const dynamic = 'force-dynamic';

export async function GET(request: Request): Promise<Response> {
  const token = env().METRICS_TOKEN;
  if (token && request.headers.get('authorization') !== `Bearer ${token}`) {
    return problemResponse(problem('unauthenticated', 'metrics: send the METRICS_TOKEN as a bearer token'), {
      'www-authenticate': 'Bearer realm="metrics"',
    });
  }
  const { body, contentType } = await scrape();
  return new Response(body, { headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
}
