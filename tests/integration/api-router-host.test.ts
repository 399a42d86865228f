// The API front routes by the request's path alone. It once built the handler's URL from the client's
// Host header, so a Host with a space made the server answer 500, and a Host carrying a path and a
// fragment ("h/api/v1/nothing#") served a different handler than the path asked for, past any proxy
// rule written for that path.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { startApiServer } from '@/scripts/bench/sdk-http-server.ts';

let t: TestDatabase;
let api: { url: string; stop(): Promise<void> };

beforeAll(async () => {
  t = await createTestDatabase();
  // The management API authorizes through the console's guard, which reads the app's own client.
  process.env.DATABASE_URL = t.appUrl;
  resetEnvCache();
  api = await startApiServer(t.appUrl, 2);
});

afterAll(async () => {
  await api?.stop();
});

/** A GET with a Host header of our choosing (fetch would not send one). */
function get(path: string, host: string): Promise<{ status: number; type: string; body: string }> {
  const { hostname, port } = new URL(api.url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method: 'GET', headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body }));
    });
    req.once('error', reject);
    req.end();
  });
}

describe('the API front routes by path, whatever the Host header says', () => {
  it('Z5: a Host with a space or with a path and fragment of its own serves the path asked for', async () => {
    for (const host of ['console.example.com', 'a b', 'h/api/v1/nothing#', 'h?x=', '[::1']) {
      const doc = await get('/api/v1/openapi.json', host);
      expect(doc.status, host).toBe(200);
      expect(JSON.parse(doc.body), host).toMatchObject({ openapi: expect.any(String) });
      // The management API's catch-all is served by the same front (401 without a token, not 404).
      const manage = await get('/api/v1/manage/me', host);
      expect(manage.status, host).toBe(401);
      expect(JSON.parse(manage.body), host).toMatchObject({ code: 'unauthenticated' });
      const missing = await get('/api/v1/nothing-here', host);
      expect(missing.status, host).toBe(404);
      expect(missing.type, host).toContain('json');
    }
  });
});
