// A real SMTP server (npm smtp-server) in the test process that records every message it accepted,
// replies "250 OK: queued as <id>", and offers a read-only lookup by Message-ID over HTTP (what a
// hosted relay's message-status API does), so the reconciler has something real to ask.
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface AcceptedMessage {
  queueId: string;
  messageId: string | null;
  idempotencyKey: string | null;
  from: string;
  to: string[];
  size: number;
  at: number;
  /** The message exactly as received after DATA (CRLF line ends), when started with keepRaw. */
  raw?: string;
}

export interface TestSmtpServer {
  port: number;
  lookupUrl: string;
  messages: AcceptedMessage[];
  /** Messages per recipient address. */
  countByRecipient(): Map<string, number>;
  /** Stop listening: new connections are refused (the lookup endpoint keeps answering). */
  refuseConnections(): Promise<void>;
  /** Listen again on the same port. */
  acceptConnections(): Promise<void>;
  /** Make the lookup endpoint answer 503 (C3). */
  lookupFails: boolean;
  /** Forget a message at the lookup endpoint (as if the relay lost it). */
  hideFromLookup(messageId: string): void;
  close(): Promise<void>;
}

function header(raw: string, name: string): string | null {
  const head = raw.split(/\r?\n\r?\n/, 1)[0] ?? '';
  const m = new RegExp(`^${name}:[ \\t]*(.+)$`, 'im').exec(head);
  return m ? m[1]!.trim() : null;
}

export async function startTestSmtpServer(options: { port?: number; keepRaw?: boolean } = {}): Promise<TestSmtpServer> {
  const messages: AcceptedMessage[] = [];
  const hidden = new Set<string>();
  const make = () =>
    new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      closeTimeout: 200,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const queueId = randomBytes(6).toString('hex').toUpperCase();
          messages.push({
            queueId,
            messageId: header(raw, 'Message-ID'),
            idempotencyKey: header(raw, 'Idempotency-Key'),
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            size: raw.length,
            at: Date.now(),
            ...(options.keepRaw ? { raw } : {}),
          });
          callback(null, `OK: queued as ${queueId}`);
        });
      },
    });
  let smtp = make();
  // A client killed mid-session resets its socket; that is the client's problem, not the server's.
  const quiet = (server: SMTPServer) => server.on('error', () => undefined);
  quiet(smtp);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      smtp.once('error', reject);
      // A real relay answers at once; without this, Nagle + delayed ACK add ~40 ms to every reply.
      smtp.server.on('connection', (socket: import('node:net').Socket) => socket.setNoDelay(true));
      smtp.listen(port, '127.0.0.1', () => resolve((smtp.server.address() as AddressInfo).port));
    });
  const port = await listen(options.port ?? 0);

  const state = { lookupFails: false };
  const http: HttpServer = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (state.lookupFails) {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"lookup unavailable"}');
      return;
    }
    const id = url.searchParams.get('messageId');
    const hit = id && !hidden.has(id) ? messages.find((m) => m.messageId === id) : undefined;
    if (!hit) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"found":false}');
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ found: true, queueId: hit.queueId, state: 'accepted' }));
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  const lookupUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/lookup`;

  return {
    port,
    lookupUrl,
    messages,
    countByRecipient() {
      const counts = new Map<string, number>();
      for (const m of messages) for (const to of m.to) counts.set(to, (counts.get(to) ?? 0) + 1);
      return counts;
    },
    async refuseConnections() {
      await new Promise<void>((r) => smtp.close(() => r()));
    },
    async acceptConnections() {
      smtp = make();
      quiet(smtp);
      await listen(port);
    },
    get lookupFails() {
      return state.lookupFails;
    },
    set lookupFails(v: boolean) {
      state.lookupFails = v;
    },
    hideFromLookup(messageId: string) {
      hidden.add(messageId);
    },
    async close() {
      await new Promise<void>((r) => smtp.close(() => r()));
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
