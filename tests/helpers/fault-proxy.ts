// A TCP relay between PgBouncer and the test's PostgreSQL that can take the server away in the two
// ways a client sees it go: `down` (every connection closed, new ones closed at once: a stopped or
// restarting server) and `frozen` (connections stay open and nothing comes back: a paused server or a
// network partition). The shared test server itself is left alone, so other test files run on.
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export type ProxyMode = 'open' | 'down' | 'frozen';

export interface FaultProxy {
  port: number;
  set(mode: ProxyMode): void;
  close(): Promise<void>;
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  let mode: ProxyMode = 'open';
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((client) => {
    if (mode === 'down') return void client.destroy();
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
    if (mode === 'frozen') freeze(pair);
  });
  const freeze = ([a, b]: [Socket, Socket]) => {
    a.unpipe(b);
    b.unpipe(a);
    a.pause();
    b.pause();
  };
  const thaw = ([a, b]: [Socket, Socket]) => {
    a.pipe(b);
    b.pipe(a);
    a.resume();
    b.resume();
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    set(next) {
      if (next === mode) return;
      const before = mode;
      mode = next;
      for (const pair of [...pairs]) {
        if (next === 'down') pair.forEach((s) => s.destroy());
        else if (next === 'frozen') freeze(pair);
        else if (before === 'frozen') thaw(pair);
      }
    },
    async close() {
      for (const pair of pairs) pair.forEach((s) => s.destroy());
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
