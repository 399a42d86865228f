// R2 and what a recipient receives: a message delivered through the real SMTP server, read back with
// a strict parser (mailparser). Every raw line stays within RFC 5322's 998 characters and every header
// line within 78 (folded at whitespace, continuation lines starting with a space or tab); the text
// survives the round trip; and nothing in the message names the effect key or the trigger and record
// ids it is built from: the Message-ID and Idempotency-Key are the opaque idempotency key.
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKey, providerIdempotencyKey } from '@/lib/ledger/index.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import type { SmtpProvider } from '@/lib/providers/smtp/index.ts';
import { startTestSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.ts';

const TRIGGER = 'signup-batch-7f3a9c41-internal';
const RECORD = 'customer-record-0042-internal';
let smtp: TestSmtpServer;
let providers: ProviderRegistry;
let email: SmtpProvider;

beforeAll(async () => {
  smtp = await startTestSmtpServer({ keepRaw: true });
  providers = new ProviderRegistry({
    smtp: { type: 'smtp', host: '127.0.0.1', port: smtp.port, ignoreTLS: true, from: 'campaigns@example.com' },
  });
  email = providers.get('smtp') as SmtpProvider;
});
afterAll(async () => {
  await providers?.close();
  await smtp?.close();
});

const subjects: [string, string][] = [
  ['a subject of 3,000 characters without whitespace', 'x'.repeat(3000)],
  ['a long subject of words', 'Welcome to the workspace '.repeat(120).trim()],
  ['a long non-ASCII subject', 'Grüße aus Köln, 東京からこんにちは '.repeat(80).trim()],
  ['a long URL among words', `Your link: https://example.com/${'a1b2'.repeat(400)} expires soon`],
  ['text that looks like an encoded word', '=?UTF-8?B?SGVsbG8=?= is not to be decoded'],
];

async function deliver(recordSuffix: string, subject: string, text: string) {
  const { key, target } = deriveKey({
    triggerId: TRIGGER,
    tool: 'send_welcome_email',
    action: 'campaign_welcome',
    recordId: `${RECORD}-${recordSuffix}`,
    targetType: 'email',
    target: `lena.${recordSuffix}@example.com`,
  });
  const idempotencyKey = providerIdempotencyKey(key, 1);
  const before = smtp.messages.length;
  const raw = await email.send({ key, epoch: 1, idempotencyKey, target, payload: { subject, text } });
  expect(email.classify(raw).outcome).toBe('done');
  expect(smtp.messages).toHaveLength(before + 1);
  return { key, idempotencyKey, message: smtp.messages.at(-1)! };
}

describe('SMTP messages as a recipient receives them', () => {
  it.each(subjects)(
    'R2: %s: lines within 998 (headers within 78, folded), the subject survives, no internal id appears',
    async (label, subject) => {
      const text = `Hello Lena,\n${'A very long paragraph without a line break. '.repeat(100)}\n${'z'.repeat(2500)}\n`;
      const { key, idempotencyKey, message } = await deliver(label.replace(/\W+/g, '-'), subject, text);
      const raw = message.raw!;
      const lines = raw.split('\r\n');
      expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(998);
      const head = raw.slice(0, raw.indexOf('\r\n\r\n')).split('\r\n');
      for (const line of head) expect(line.length, line.slice(0, 40)).toBeLessThanOrEqual(78);
      // Folding: every header line is either "Name: value" or a continuation starting with whitespace.
      for (const line of head) expect(line).toMatch(/^([A-Za-z0-9-]+:( |$)|[ \t])/);
      expect(head.filter((l) => /^Subject:( |$)/.test(l))).toHaveLength(1);

      const parsed = await simpleParser(raw);
      expect(parsed.subject).toBe(subject);
      expect(parsed.text).toBe(text);
      expect(parsed.messageId).toBe(email.receiptHint(idempotencyKey));
      expect(parsed.headers.get('idempotency-key')).toBe(idempotencyKey);

      // Nothing internal: not the key, not its escaped form, not the trigger or record id it holds.
      const unfolded = raw.replace(/\r\n[ \t]/g, ' ');
      for (const secret of [key, encodeURIComponent(key), TRIGGER, RECORD, 'send_welcome_email', 'campaign_welcome'])
        expect(unfolded).not.toContain(secret);
      expect([...parsed.headers.keys()].filter((h) => h.startsWith('x-effect'))).toEqual([]);
    },
  );

  it('R2: the receipt the reconciler looks up is the delivered Message-ID, and each epoch has its own', async () => {
    const { key, message } = await deliver('epochs', 'Hello', 'Hi');
    const receipt = email.classify(
      await email.send({
        key,
        epoch: 2,
        idempotencyKey: providerIdempotencyKey(key, 2),
        target: 'lena.epochs@example.com',
        payload: { subject: 'Hello', text: 'Hi' },
      }),
    );
    const second = smtp.messages.at(-1)!;
    expect(message.messageId).toBe(email.receiptHint(providerIdempotencyKey(key, 1)));
    expect(second.messageId).toBe(email.receiptHint(providerIdempotencyKey(key, 2)));
    expect(second.messageId).not.toBe(message.messageId);
    expect(receipt).toEqual({ outcome: 'done', receipt: `${second.messageId} queue=${second.queueId}` });
  });
});
