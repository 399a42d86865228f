// Email over SMTP with nodemailer. The receipt is the Message-ID plus the queue id the server gave in
// its reply ("250 OK: queued as 4F2A1C"), written "<message-id> queue=<id>". The Message-ID is derived
// from the ledger's idempotency key (R2), so a crash between the send and the recording of the reply
// still leaves a receipt the reconciler can look up (C1). SMTP itself has no read-only lookup: when
// the mail service offers one (most hosted relays do: a message-status API by Message-ID), set
// `lookupUrl`; without it supportsReceiptLookup is false and the reconciler says so in its evidence.
import { connect } from 'node:net';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Classification, LookupResult, Provider, RawResponse, SendRequest } from '../types.ts';
import { callFailure, type ProviderSettingsBase } from '../types.ts';
import { readLookup } from '../http-answer.ts';
import { foldableHeaderValue } from './headers.ts';

export interface SmtpSettings extends ProviderSettingsBase {
  type: 'smtp';
  host: string;
  port: number;
  /** Implicit TLS (465). STARTTLS is used when the server offers it, unless ignoreTLS. */
  secure?: boolean;
  ignoreTLS?: boolean;
  /** Envelope sender and From header. */
  from: string;
  /** Right-hand side of generated Message-IDs. */
  messageIdDomain?: string;
  /** Unused since sends use one connection each (kept so existing configuration still parses). */
  maxConnections?: number;
  /** Seconds before a silent server counts as a timeout (an ambiguous outcome once DATA started). */
  timeoutSeconds?: number;
  /** GET `${lookupUrl}?messageId=<id>` -> 200 {found, queueId?, state?}; 404 is a miss. */
  lookupUrl?: string;
  /** Credentials come from the environment (SMTP_USER / SMTP_PASSWORD), never from this file. */
  auth?: { user: string; pass: string };
}

const QUEUE_ID = /queued as ([A-Za-z0-9._-]+)/i;

export function messageIdFor(idempotencyKey: string, domain: string): string {
  return `<${idempotencyKey}@${domain}>`;
}

export function parseSmtpReceipt(receipt: string): { messageId: string; queueId: string | null } {
  const [messageId, queue] = receipt.split(' queue=');
  return { messageId: messageId!, queueId: queue ?? null };
}

const text = (s: string) => new TextEncoder().encode(s);

export class SmtpProvider implements Provider {
  readonly name: string;
  readonly supportsIdempotencyKey = true;
  readonly supportsReceiptLookup: boolean;
  private readonly transport: nodemailer.Transporter<SMTPTransport.SentMessageInfo>;
  private readonly domain: string;

  constructor(
    name: string,
    readonly settings: SmtpSettings,
  ) {
    this.name = name;
    this.supportsReceiptLookup = Boolean(settings.lookupUrl);
    this.domain = settings.messageIdDomain ?? settings.from.split('@')[1] ?? 'effect-ledger.local';
    const timeout = (settings.timeoutSeconds ?? 30) * 1000;
    this.transport = nodemailer.createTransport({
      // One connection per message, no pool: nodemailer's pool re-sends a message by itself after a
      // connection drops mid-send (a second delivery the ledger never hears of) and can hang while a
      // server refuses connections. Per-message connections keep every outcome with its caller.
      pool: false,
      host: settings.host,
      port: settings.port,
      secure: settings.secure ?? false,
      ignoreTLS: settings.ignoreTLS ?? false,
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
      auth: settings.auth,
      // Our own socket with Nagle off: the message body goes out in several writes, and Nagle plus
      // the server's delayed ACK would add ~40 ms to every message. Connection errors keep their
      // syscall ('connect'), which is how send() knows nothing left this process.
      getSocket: (
        _options: unknown,
        callback: (err: Error | null, socketOptions?: { connection: import('node:net').Socket }) => void,
      ) => {
        const socket = connect({ host: settings.host, port: settings.port, noDelay: true });
        const onError = (err: Error) => callback(err);
        socket.once('error', onError);
        socket.once('connect', () => {
          socket.off('error', onError);
          callback(null, { connection: socket });
        });
      },
    } as SMTPTransport.Options);
  }

  /** The receipt's Message-ID part is known before the call (C1 after a crash). */
  receiptHint(idempotencyKey: string): string {
    return messageIdFor(idempotencyKey, this.domain);
  }

  async send(request: SendRequest, signal?: AbortSignal): Promise<RawResponse> {
    const payload = request.payload as { subject?: unknown; text?: unknown; html?: unknown };
    const messageId = messageIdFor(request.idempotencyKey, this.domain);
    try {
      const info = await withDeadline(
        signal,
        this.transport.sendMail({
          from: this.settings.from,
          to: request.target,
          subject: foldableHeaderValue(typeof payload.subject === 'string' ? payload.subject : '(no subject)'),
          text: typeof payload.text === 'string' ? payload.text : '',
          ...(typeof payload.html === 'string' ? { html: payload.html } : {}),
          messageId,
          // What the recipient sees carries no internal ids: the Message-ID and this header are both the
          // opaque idempotency key (a hash of the effect key and epoch), never the key itself, whose
          // trigger and record ids are ours. Support finds the effect from either value (R2, C1).
          headers: { 'Idempotency-Key': request.idempotencyKey },
        }),
      );
      return this.raw(250, messageId, info.response, {
        accepted: info.accepted.map(String),
        rejected: info.rejected.map(String),
      });
    } catch (error) {
      // The caller's deadline (the provider's sendTimeoutSeconds) passed: whatever the server got is
      // unknown to us. nodemailer cannot be told to stop; its socket timeout ends the connection.
      if (error === ABORTED)
        throw callFailure('maybe', `SMTP send abandoned: ${String(signal?.reason ?? 'aborted')}`, { code: 'ABORTED' });
      const e = error as Error & {
        code?: string;
        responseCode?: number;
        response?: string;
        command?: string;
        syscall?: string;
      };
      // A 4xx or 5xx reply refused the message (at the greeting, RCPT, DATA or after the body): nothing
      // was accepted, and the reply is the response (S3). nodemailer also puts a responseCode on
      // errors that are no answer about the message: a "250" greeting, a reply cut off mid-EHLO by a
      // dropped connection ("250-partial"), a 2xx where AUTH expected 334, a 3xx after the body. Taken
      // as the answer, 2xx plus our own Message-ID would be classified done for an email that was never
      // sent (S2): those are call failures, whose reply goes into the evidence.
      if (typeof e.responseCode === 'number' && e.responseCode >= 400 && e.response)
        return this.raw(e.responseCode, messageId, e.response, { command: e.command ?? null });
      // No connection was ever made, or nodemailer refused before the envelope: nothing left this
      // process. Which command a stray reply answered cannot be told in general (nodemailer reports a
      // reply at any stage with no command waiting as "CONN"), so anything else may have been sent.
      const neverConnected =
        e.syscall === 'connect' ||
        e.syscall === 'getaddrinfo' ||
        (e.code === 'EENVELOPE' && e.command === 'API') ||
        e.code === 'EAUTH';
      throw callFailure(
        neverConnected ? 'no' : 'maybe',
        `SMTP ${e.code ?? 'error'} at ${e.command ?? 'connection'}: ${e.message}`,
        {
          code: e.code ?? null,
          command: e.command ?? null,
          syscall: e.syscall ?? null,
          ...(e.response ? { reply: e.response, replyCode: e.responseCode ?? null } : {}),
        },
      );
    }
  }

  private raw(status: number, messageId: string, reply: string, extra: Record<string, unknown>): RawResponse {
    const headers: [string, string][] = [
      ['message-id', messageId],
      ['smtp-reply', reply],
      ...Object.entries(extra).map(([k, v]) => [`x-${k}`, JSON.stringify(v)] as [string, string]),
    ];
    return { status, headers, body: text(reply) };
  }

  classify(response: RawResponse): Classification {
    const reply = new TextDecoder().decode(response.body);
    const messageId = response.headers.find(([k]) => k === 'message-id')?.[1];
    if (response.status >= 200 && response.status < 300) {
      const queueId = QUEUE_ID.exec(reply)?.[1];
      // Accepted with no queue id: the Message-ID alone is still a receipt we can look up (S2).
      if (!messageId) return { outcome: 'unknown', evidence: { reply, why: 'accepted but no Message-ID recorded' } };
      return { outcome: 'done', receipt: queueId ? `${messageId} queue=${queueId}` : messageId };
    }
    // 4xx: transient refusal, 5xx: permanent. Either way the server did not take the message (S3).
    // 421: the service is closing the channel (shutting down, overloaded): nothing about this message,
    // so the caller should retry later rather than report the target as failed.
    return {
      outcome: 'failed',
      evidence: {
        smtpStatus: response.status,
        reply,
        permanent: response.status >= 500,
        ...(response.status === 421 ? { unavailable: true } : {}),
      },
    };
  }

  async lookup(receipt: string, signal?: AbortSignal): Promise<LookupResult> {
    if (!this.settings.lookupUrl) throw new Error(`provider ${this.name} has no receipt lookup configured`);
    const { messageId } = parseSmtpReceipt(receipt);
    const url = new URL(this.settings.lookupUrl);
    url.searchParams.set('messageId', messageId);
    const res = await fetch(url, { signal: signal ?? AbortSignal.timeout(10_000) });
    const { raw, hit } = await readLookup(res, url.host);
    if (!hit) return { found: false, raw };
    const queueId = typeof hit.body.queueId === 'string' && hit.body.queueId ? hit.body.queueId : null;
    return { found: true, receipt: queueId ? `${messageId} queue=${queueId}` : messageId, state: hit.state, raw };
  }

  close(): void {
    this.transport.close();
  }
}

const ABORTED = Symbol('aborted');

/** The send, or ABORTED as soon as the caller's signal fires (a deadline nodemailer cannot take). */
function withDeadline<T>(signal: AbortSignal | undefined, sending: Promise<T>): Promise<T> {
  if (!signal) return sending;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(ABORTED);
    // Settled either way, so a late failure of an abandoned send is never an unhandled rejection.
    sending.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
  });
}
