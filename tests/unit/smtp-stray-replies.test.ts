// The SMTP provider against a raw TCP server that answers out of turn, or not at all. nodemailer
// puts a reply code on errors raised long before the message (a "250" greeting, an EHLO reply cut
// off by a dropped connection, a 2xx where AUTH expected 334) and after it (a 3xx to the body).
// Only a 4xx or 5xx is the server's answer about the message; anything else is a call failure, so
// no reply from before the envelope ever classifies as done with our own Message-ID (S2).
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SmtpProvider } from '@/lib/providers/smtp/index.ts';
import { isCallFailure, type CallFailure } from '@/lib/providers/types.ts';

/** A reply line (several lines joined by CRLF), or text written without its line end, after which
 *  the server closes the connection. */
type Reply = string | { cutOff: string } | { silent: true };

interface Script {
  greeting: Reply;
  /** The reply to a command line ("EHLO x", "MAIL FROM:<...>"); the default accepts it. */
  command?: (line: string) => Reply | undefined;
  /** The reply once the body's final "." arrived. */
  afterBody?: Reply;
}

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  // A silent server's connection is still open (the client gave up on it, not its socket): end it.
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const s of servers.splice(0)) await new Promise<void>((r) => s.close(() => r()));
});

async function rawSmtp(script: Script): Promise<{ port: number; commands: string[] }> {
  const commands: string[] = [];
  const accept = (line: string): string =>
    line.startsWith('EHLO') ? '250-raw.test\r\n250 8BITMIME' : line === 'DATA' ? '354 go ahead' : '250 ok';
  const server = createServer((socket: Socket) => {
    sockets.push(socket);
    const send = (reply: Reply) =>
      typeof reply === 'string'
        ? socket.write(`${reply}\r\n`)
        : 'cutOff' in reply
          ? socket.end(reply.cutOff)
          : undefined; // silent: the server holds the connection and never answers

    let buffer = '';
    let inBody = false;
    socket.on('error', () => undefined); // the client may drop the connection first
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      for (let end = buffer.indexOf('\r\n'); end >= 0; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (inBody) {
          if (line === '.') {
            inBody = false;
            send(script.afterBody ?? '250 OK: queued as RAW1');
          }
          continue;
        }
        commands.push(line);
        if (line === 'QUIT') return void socket.end('221 bye\r\n');
        if (line === 'DATA') inBody = true;
        send(script.command?.(line) ?? accept(line));
      }
    });
    send(script.greeting);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as AddressInfo).port, commands };
}

function provider(port: number, auth?: { user: string; pass: string }) {
  return new SmtpProvider('raw', {
    type: 'smtp',
    host: '127.0.0.1',
    port,
    ignoreTLS: true,
    from: 'ledger@example.com',
    timeoutSeconds: 5,
    auth,
  });
}

const request = { key: 'k', epoch: 1, idempotencyKey: 'idem-raw-1', target: 'someone@example.com', payload: {} };

/** What send() ended with: the raw reply it resolved with, or the call failure it threw. */
async function sendThrough(p: SmtpProvider, signal?: AbortSignal) {
  try {
    const raw = await p.send(request, signal);
    return { raw, verdict: p.classify(raw) };
  } finally {
    p.close();
  }
}
async function callFailureOf(p: SmtpProvider): Promise<CallFailure> {
  const ended = await sendThrough(p).then(
    (answered) => answered,
    (error: unknown) => error,
  );
  if (!isCallFailure(ended)) throw new Error(`expected a call failure, got ${JSON.stringify(ended)}`);
  return ended;
}

describe('SMTP replies that are no answer about the message', () => {
  it('S2: a "250" greeting is a call failure that may have sent something, not a reply classified done', async () => {
    const server = await rawSmtp({ greeting: '250 hello' });
    const failure = await callFailureOf(provider(server.port));
    expect(failure.providerSent).toBe('maybe');
    expect(failure.detail).toMatchObject({ code: 'EPROTOCOL', reply: '250 hello', replyCode: 250 });
    expect(server.commands.some((c) => c.startsWith('MAIL FROM'))).toBe(false);
  });

  it('S2: an EHLO reply cut off by a dropped connection ("250-partial") is a call failure, not done', async () => {
    const server = await rawSmtp({
      greeting: '220 raw.test ESMTP',
      command: (line) => (line.startsWith('EHLO') ? { cutOff: '250-partial' } : undefined),
    });
    const failure = await callFailureOf(provider(server.port));
    expect(failure.providerSent).toBe('maybe');
    expect(failure.detail).toMatchObject({ code: 'ECONNECTION', replyCode: 250 });
  });

  it('S2: a 2xx where AUTH LOGIN expected 334 is an authentication failure before the envelope: nothing sent', async () => {
    const server = await rawSmtp({
      greeting: '220 raw.test ESMTP',
      command: (line) =>
        line.startsWith('EHLO') ? '250-raw.test\r\n250 AUTH LOGIN' : line.startsWith('AUTH') ? '250 fine' : undefined,
    });
    const failure = await callFailureOf(provider(server.port, { user: 'u', pass: 'p' }));
    expect(failure.providerSent).toBe('no');
    expect(failure.detail).toMatchObject({ code: 'EAUTH', replyCode: 250 });
    expect(server.commands.some((c) => c.startsWith('MAIL FROM'))).toBe(false);
  });

  it('S4: a 3xx after the body is no refusal: the server had the whole message, so the outcome is ambiguous', async () => {
    const server = await rawSmtp({ greeting: '220 raw.test ESMTP', afterBody: '354 again?' });
    const failure = await callFailureOf(provider(server.port));
    expect(failure.providerSent).toBe('maybe');
    expect(failure.detail).toMatchObject({ code: 'EMESSAGE', command: 'DATA', replyCode: 354 });
  });

  it('S3: a 4xx or 5xx is still the answer about the message: the raw reply, classified failed', async () => {
    const refusing = await rawSmtp({
      greeting: '220 raw.test ESMTP',
      command: (line) => (line.startsWith('RCPT') ? '550 5.1.1 no such user' : undefined),
    });
    const { raw, verdict } = await sendThrough(provider(refusing.port));
    expect(raw.status).toBe(550);
    expect(verdict).toMatchObject({ outcome: 'failed', evidence: { smtpStatus: 550, permanent: true } });

    const accepting = await rawSmtp({ greeting: '220 raw.test ESMTP' });
    const sent = await sendThrough(provider(accepting.port));
    expect(sent.verdict).toEqual({ outcome: 'done', receipt: '<idem-raw-1@example.com> queue=RAW1' });
  });
});

describe("the executor's deadline (sendTimeoutSeconds)", () => {
  it('S4: a server silent after the body is abandoned when the signal fires: an ambiguous call failure', async () => {
    const server = await rawSmtp({ greeting: '220 raw.test ESMTP', afterBody: { silent: true } });
    const started = performance.now();
    const ended = await sendThrough(provider(server.port), AbortSignal.timeout(300)).then(
      (answered) => answered,
      (error: unknown) => error,
    );
    // The provider's own socket timeout is 5 s here: only the signal can end the call this soon.
    expect(performance.now() - started).toBeLessThan(3000);
    if (!isCallFailure(ended)) throw new Error(`expected a call failure, got ${JSON.stringify(ended)}`);
    expect(ended.providerSent).toBe('maybe');
    expect(ended.detail).toMatchObject({ code: 'ABORTED' });
    expect(server.commands).toContain('DATA');
  });

  it('a signal that never fires changes nothing: the reply is still the answer', async () => {
    const server = await rawSmtp({ greeting: '220 raw.test ESMTP' });
    const sent = await sendThrough(provider(server.port), new AbortController().signal);
    expect(sent.verdict).toEqual({ outcome: 'done', receipt: '<idem-raw-1@example.com> queue=RAW1' });
  });
});
