// A real HTTP email-like provider for the demo and tests, behaving like the ones in the seed
// discussion: a message id as receipt; lookup by id with a settle lag before a sent message is
// visible, by id or by the idempotency key it was sent with; provider idempotency keys (R2); and failure modes on demand: 4xx reject, 5xx (before or
// after sending), timeout after accepting, body-hash dedup that answers already_existed=true pointing
// at a failed prior object (R3, S6), and 201 with a one-shot completion token. Every message that
// reached its recipient is recorded in `deliveries`, so tests count exactly what a recipient got.
// `latencyMs` (or setLatency) makes every send answer after a fixed delay, like a real provider
// (SMTP, chat APIs: tens to hundreds of ms per call), for benchmarks bound by provider latency.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAILURE_MODES = [
  /** 422: the recipient is refused. Nothing is sent. */
  'reject',
  /** 500 before anything is sent. */
  'server_error',
  /** The message is delivered, then the provider answers 502. */
  'server_error_after_send',
  /** The message is delivered and the response never comes (the client times out). */
  'timeout_after_accept',
  /** 201 accepted, then the message bounces: lookups show it failed. Nothing reaches the recipient. */
  'accept_then_fail',
  /** Body-hash dedup: 200 already_existed=true pointing at a prior message that failed permanently. */
  'already_existed_failed',
  /** 201 with a one-shot completion token: nothing is sent until POST /v1/messages/{id}/complete. */
  'completion_token',
] as const;
export type FailureMode = (typeof FAILURE_MODES)[number];

export interface SandboxOptions {
  port?: number;
  host?: string;
  /** Milliseconds after a send during which lookups answer 404 (C2). */
  settleLagMs?: number;
  /** Dedupe on the hash of (to, subject, body), like some real providers do. */
  bodyHashDedup?: boolean;
  /** How long a timeout_after_accept request is held before its socket is dropped. */
  holdMs?: number;
  /** Milliseconds every POST /v1/messages waits before it is handled and answered (default 0). */
  latencyMs?: number;
}

export type MessageStatus = 'delivered' | 'accepted' | 'failed' | 'awaiting_completion';

export interface SandboxMessage {
  id: string;
  to: string;
  subject: string;
  body: string;
  bodyHash: string;
  idempotencyKey: string | null;
  status: MessageStatus;
  createdAt: number;
  completionToken?: string;
  tokenUsed?: boolean;
}

export interface Delivery {
  messageId: string;
  to: string;
  subject: string;
  body: string;
  idempotencyKey: string | null;
  at: Date;
}

interface Rule {
  mode: FailureMode;
  to?: string;
  times: number;
}

export interface Sandbox {
  url: string;
  deliveries: Delivery[];
  messages: Map<string, SandboxMessage>;
  /** Count of POST /v1/messages requests received (including refused ones). */
  requests: () => number;
  /** The next `times` sends (to `to`, or to anyone) fail in this mode. */
  failNext(mode: FailureMode, options?: { to?: string; times?: number }): void;
  deliveriesTo(to: string): Delivery[];
  setSettleLag(ms: number): void;
  /** Every later send waits this many milliseconds before it is handled and answered. */
  setLatency(ms: number): void;
  reset(): void;
  stop(): Promise<void>;
}

const norm = (s: string) => s.trim().toLowerCase();

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const deliveries: Delivery[] = [];
  const messages = new Map<string, SandboxMessage>();
  const byIdempotencyKey = new Map<string, string>();
  const byBodyHash = new Map<string, string>();
  let rules: Rule[] = [];
  let settleLagMs = options.settleLagMs ?? 0;
  let latencyMs = options.latencyMs ?? 0;
  let requestCount = 0;
  const holdMs = options.holdMs ?? 30_000;
  const held = new Set<NodeJS.Timeout>();

  const newId = () => `msg_${randomBytes(9).toString('base64url')}`;
  const deliver = (m: SandboxMessage) => {
    m.status = 'delivered';
    deliveries.push({
      messageId: m.id,
      to: m.to,
      subject: m.subject,
      body: m.body,
      idempotencyKey: m.idempotencyKey,
      at: new Date(),
    });
  };
  const takeRule = (to: string): Rule | undefined => {
    const rule = rules.find((r) => r.times > 0 && (!r.to || norm(r.to) === to));
    if (rule) rule.times -= 1;
    rules = rules.filter((r) => r.times > 0);
    return rule;
  };
  const view = (m: SandboxMessage) => ({
    id: m.id,
    to: m.to,
    status: m.status,
    createdAt: new Date(m.createdAt).toISOString(),
  });

  const server = http.createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, {
        'content-type': 'application/json',
        'x-sandbox-request': randomBytes(6).toString('hex'),
      });
      res.end(JSON.stringify(body));
    };
    try {
      const url = new URL(req.url ?? '/', 'http://sandbox');
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      const json = text ? (JSON.parse(text) as Record<string, unknown>) : {};

      if (req.method === 'POST' && url.pathname === '/v1/messages') {
        requestCount += 1;
        if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
        const to = typeof json.to === 'string' ? norm(json.to) : '';
        const subject = typeof json.subject === 'string' ? json.subject : '';
        const body = typeof json.body === 'string' ? json.body : '';
        if (!to.includes('@'))
          return send(400, { error: { type: 'invalid_request', message: '"to" must be an email address' } });
        const idem = req.headers['idempotency-key'];
        const idempotencyKey = typeof idem === 'string' ? idem : null;
        if (idempotencyKey && byIdempotencyKey.has(idempotencyKey)) {
          const prior = messages.get(byIdempotencyKey.get(idempotencyKey)!)!;
          return send(200, { ...view(prior), deduplicated: true });
        }
        const bodyHash = createHash('sha256').update(`${to}\n${subject}\n${body}`).digest('hex');
        const rule = takeRule(to);
        const message: SandboxMessage = {
          id: newId(),
          to,
          subject,
          body,
          bodyHash,
          idempotencyKey,
          status: 'accepted',
          createdAt: Date.now(),
        };
        const keep = () => {
          messages.set(message.id, message);
          if (idempotencyKey) byIdempotencyKey.set(idempotencyKey, message.id);
          if (!byBodyHash.has(bodyHash)) byBodyHash.set(bodyHash, message.id);
        };
        if (!rule && options.bodyHashDedup && byBodyHash.has(bodyHash)) {
          return send(200, { already_existed: true, id: byBodyHash.get(bodyHash) });
        }
        switch (rule?.mode) {
          case undefined:
            keep();
            deliver(message);
            return send(201, view(message));
          case 'reject':
            return send(422, { error: { type: 'invalid_recipient', message: `mailbox ${to} is unavailable` } });
          case 'server_error':
            return send(500, { error: { type: 'internal', message: 'internal error' } });
          case 'server_error_after_send':
            keep();
            deliver(message);
            return send(502, { error: { type: 'bad_gateway', message: 'upstream error' } });
          case 'timeout_after_accept': {
            keep();
            deliver(message);
            const timer = setTimeout(() => {
              held.delete(timer);
              req.socket.destroy();
            }, holdMs);
            held.add(timer);
            res.on('close', () => {
              clearTimeout(timer);
              held.delete(timer);
            });
            return;
          }
          case 'accept_then_fail':
            keep();
            message.status = 'failed';
            return send(201, {
              id: message.id,
              to,
              status: 'accepted',
              createdAt: new Date(message.createdAt).toISOString(),
            });
          case 'already_existed_failed': {
            let priorId = byBodyHash.get(bodyHash);
            if (!priorId) {
              const prior: SandboxMessage = { ...message, status: 'failed', createdAt: Date.now() - 86_400_000 };
              messages.set(prior.id, prior);
              byBodyHash.set(bodyHash, prior.id);
              priorId = prior.id;
            }
            const prior = messages.get(priorId)!;
            if (prior.status !== 'failed') prior.status = 'failed';
            return send(200, { already_existed: true, id: priorId });
          }
          case 'completion_token':
            keep();
            message.status = 'awaiting_completion';
            message.completionToken = `ct_${randomBytes(12).toString('base64url')}`;
            return send(201, { ...view(message), completionToken: message.completionToken });
          default:
            return rule!.mode satisfies never;
        }
      }

      const complete = /^\/v1\/messages\/([\w-]+)\/complete$/.exec(url.pathname);
      if (req.method === 'POST' && complete) {
        const m = messages.get(complete[1]!);
        if (!m || (m.status !== 'awaiting_completion' && !m.tokenUsed))
          return send(404, { error: { type: 'not_found' } });
        if (m.tokenUsed)
          return send(410, {
            error: { type: 'token_used', message: 'the completion token is one-shot and was already used' },
          });
        if (json.completionToken !== m.completionToken) return send(403, { error: { type: 'bad_token' } });
        m.tokenUsed = true;
        deliver(m);
        return send(200, view(m));
      }

      // Lookup by idempotency key: which message a call with this key made, if any reached us.
      const byKey = url.pathname === '/v1/messages' ? url.searchParams.get('idempotency_key') : null;
      const lookup = /^\/v1\/messages\/([\w-]+)$/.exec(url.pathname);
      if (req.method === 'GET' && (lookup || byKey)) {
        const id = lookup ? lookup[1]! : byIdempotencyKey.get(byKey!);
        const m = id ? messages.get(id) : undefined;
        if (!m || Date.now() - m.createdAt < settleLagMs)
          return send(404, { error: { type: 'not_found', message: 'no such message' } });
        return send(200, view(m));
      }

      if (url.pathname === '/_sandbox/deliveries' && req.method === 'GET') {
        const to = url.searchParams.get('to');
        return send(200, { deliveries: to ? deliveries.filter((d) => d.to === norm(to)) : deliveries });
      }
      if (url.pathname === '/_sandbox/fail' && req.method === 'POST') {
        const mode = json.mode as FailureMode;
        if (!FAILURE_MODES.includes(mode))
          return send(400, {
            error: { type: 'invalid_request', message: `mode must be one of ${FAILURE_MODES.join(', ')}` },
          });
        rules.push({
          mode,
          to: typeof json.to === 'string' ? json.to : undefined,
          times: typeof json.times === 'number' ? json.times : 1,
        });
        return send(200, { ok: true });
      }
      send(404, { error: { type: 'not_found' } });
    } catch (error) {
      send(400, { error: { type: 'invalid_request', message: (error as Error).message } });
    }
  });

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    messages,
    requests: () => requestCount,
    failNext(mode, o = {}) {
      rules.push({ mode, to: o.to, times: o.times ?? 1 });
    },
    deliveriesTo: (to) => deliveries.filter((d) => d.to === norm(to)),
    setSettleLag(ms) {
      settleLagMs = ms;
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    reset() {
      deliveries.length = 0;
      messages.clear();
      byIdempotencyKey.clear();
      byBodyHash.clear();
      rules = [];
    },
    async stop() {
      for (const t of held) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
