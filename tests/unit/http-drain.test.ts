// The web server's drain (scripts/support/http-drain.ts) on a plain Node server: after stop(), an
// idle keep-alive connection is closed at once, a request in flight is answered with
// `Connection: close`, an event stream is ended, no new connection is accepted, and stop() resolves
// as soon as the last connection is gone; what outlives the grace period is cut.
import { createServer, Agent, request, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { drainable } from '@/scripts/support/http-drain.ts';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
});

function get(port: number, path: string, agent: Agent): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, resolve);
    req.once('error', reject);
    req.end();
  });
}

async function start(handler: RequestListener) {
  server = createServer(handler);
  const drain = drainable(server);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { drain, port: (server.address() as AddressInfo).port };
}

describe('http drain', () => {
  it('closes idle keep-alive connections, answers in-flight requests with Connection: close, ends event streams', async () => {
    let release: () => void = () => {};
    let slowArrived: () => void = () => {};
    const slowStarted = new Promise<void>((r) => (slowArrived = r));
    const { drain, port } = await start((req, res) => {
      if (req.url === '/slow') {
        release = () => res.end('late');
        return slowArrived();
      }
      if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: hello\n\n');
        return;
      }
      res.end('ok');
    });
    const agent = new Agent({ keepAlive: true });

    const quick = await get(port, '/ok', agent);
    quick.resume();
    await new Promise((r) => quick.once('end', r));
    expect(quick.headers.connection).toBe('keep-alive'); // its socket now idle in the agent's pool
    const events = await get(port, '/events', agent);
    const eventsEnded = new Promise((r) => events.once('close', r));
    events.resume();
    const slow = get(port, '/slow', agent);
    await slowStarted;

    const stopped = drain.stop(10_000);
    expect(drain.draining).toBe(true);
    await eventsEnded;
    release();
    const late = await slow;
    expect(late.headers.connection).toBe('close');
    late.resume();
    const result = await stopped; // every connection gone well before the grace period
    expect(result).toEqual({ cut: 0 });
    await expect(get(port, '/ok', new Agent())).rejects.toThrow(/ECONNREFUSED/);
    agent.destroy();
  });

  it('cuts what outlives the grace period', async () => {
    const { drain, port } = await start(() => {
      // never answers
    });
    const agent = new Agent({ keepAlive: true });
    const arrived = new Promise((r) => server!.once('request', r));
    const hanging = get(port, '/hang', agent).catch((error: Error) => error);
    await arrived;
    const started = performance.now();
    expect(await drain.stop(200)).toEqual({ cut: 1 });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await hanging).toBeInstanceOf(Error);
    agent.destroy();
  });
});
