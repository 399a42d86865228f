// A console request as a signed-in browser on the console sends it (same origin, a session cookie),
// for tests that call server actions and routes' guards directly. The request module is passed in
// because the tests load it after setting the environment it reads.
import { randomUUID } from 'node:crypto';

type RunWithRequest = typeof import('@/lib/auth/request.ts').runWithRequest;

export function asConsoleRequest<T>(
  runWithRequest: RunWithRequest,
  cookie: string,
  fn: () => Promise<T>,
  ip = '203.0.113.7',
): Promise<T> {
  return runWithRequest(
    {
      cookie,
      ip,
      userAgent: 'vitest',
      requestId: randomUUID(),
      origin: null,
      host: 'console.test',
      secFetchSite: 'same-origin',
    },
    fn,
  );
}
