import { describe, expect, it } from 'vitest';
import { checkConformance, defineTool } from '@/lib/sdk/index.ts';

interface Args extends Record<string, unknown> {
  customerId: string;
  email: string;
  subject: string;
  body: string;
}
const sample: Args = { customerId: 'cust-42', email: 'Anna@Example.com', subject: 'Welcome!', body: 'Hi Anna' };

describe('K4 conformance check', () => {
  it('K4: a tool whose identity uses only the record and the target passes: varying every generated input leaves the key unchanged', async () => {
    const tool = defineTool<Args>({
      name: 'send_email',
      action: 'welcome',
      targetType: 'email',
      generated: ['subject', 'body'],
      identity: (a) => ({ record: a.customerId, target: a.email }),
    });
    const report = await checkConformance(tool, { sample });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.variations).toBe(16);
    expect(report.key).toBe('v1/conformance-trigger/send_email/welcome/cust-42/email/anna%40example.com');
  });

  it('K4: a tool that puts generated content into its identity fails, naming the input and the variant', async () => {
    const tool = defineTool<Args>({
      name: 'send_email',
      action: 'welcome',
      targetType: 'email',
      generated: ['subject', 'body'],
      identity: (a) => ({ record: `${a.customerId}:${a.subject}`, target: a.email }),
    });
    const report = await checkConformance(tool, { sample });
    expect(report.ok).toBe(false);
    expect(
      report.problems.some(
        (p) => p.input === 'subject' && p.variant === 'reworded' && p.problem.includes('the key moved'),
      ),
    ).toBe(true);
    expect(report.problems.some((p) => p.problem.includes('reads model-generated input(s) subject'))).toBe(true);
  });

  it('K4: merely reading a generated input in identity() is reported even when the key happens not to move', async () => {
    const tool = defineTool<Args>({
      name: 'send_email',
      action: 'welcome',
      targetType: 'email',
      generated: ['subject', 'body'],
      identity: (a) => ({ record: a.customerId, target: a.body.length > 1_000_000 ? 'x@example.com' : a.email }),
    });
    const report = await checkConformance(tool, { sample });
    expect(report.ok).toBe(false);
    expect(report.problems[0]!.problem).toContain('body');
  });
});
