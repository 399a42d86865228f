import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { checkConformance, defineTool, type ToolDefinition } from '@/lib/sdk/index.ts';

interface Args extends Record<string, unknown> {
  customerId: string;
  email: string;
  subject: string;
  body: string;
}
const sample: Args = { customerId: 'cust-42', email: 'Anna@Example.com', subject: 'Welcome!', body: 'Hi Anna' };

/** The team's customer directory: ids compared without case, surrounding space or width (NFKC). */
const customers = new Map([['cust-42', { id: 'cust-42', email: 'anna@example.com' }]]);
function lookUp(typed: string) {
  const customer = customers.get(typed.normalize('NFKC').trim().toLowerCase());
  if (!customer) throw new Error(`no customer ${typed}`);
  return customer;
}

describe('K4 conformance check', () => {
  it('K4: a tool whose identity uses only the record and the target passes: varying every generated input leaves the key unchanged', async () => {
    const tool = defineTool<Args>({
      name: 'send_email',
      action: 'welcome',
      targetType: 'email',
      generated: ['subject', 'body'],
      resolve: (a) => ({ record: lookUp(a.customerId).id, target: lookUp(a.customerId).email }),
    });
    const report = await checkConformance(tool, { sample });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    // 16 generated variations, 4 spellings of customerId (already lower-case, no NFD form) and 5 of email.
    expect(report.variations).toBe(16 + 4 + 5);
    expect(report.key).toBe('v1/conformance-trigger/send_email/welcome/cust-42/email/anna%40example.com');
  });

  it('K4: a tool that puts generated content into its identity fails, naming the input and the variant', async () => {
    const tool = defineTool<Args>({
      name: 'send_email',
      action: 'welcome',
      targetType: 'email',
      generated: ['subject', 'body'],
      resolve: (a) => ({ record: `${lookUp(a.customerId).id}:${a.subject}`, target: a.email }),
    });
    const report = await checkConformance(tool, { sample });
    expect(report.ok).toBe(false);
    expect(
      report.problems.some(
        (p) => p.input === 'subject' && p.variant === 'reworded' && p.problem.includes('the key moved'),
      ),
    ).toBe(true);
    expect(report.problems.some((p) => p.problem.includes('resolve() reads model-generated input(s) subject'))).toBe(
      true,
    );
  });

  it('K4: merely reading a generated input in resolve() is reported even when the key happens not to move', async () => {
    const tool = defineTool<Args>({
      name: 'send_email',
      action: 'welcome',
      targetType: 'email',
      generated: ['subject', 'body'],
      resolve: (a) => ({
        record: lookUp(a.customerId).id,
        target: a.body.length > 1_000_000 ? 'x@example.com' : a.email,
      }),
    });
    const report = await checkConformance(tool, { sample });
    expect(report.ok).toBe(false);
    expect(report.problems[0]!.problem).toContain('body');
  });

  it("K1, K3: a tool that keys on the model's spelling of the customer id fails: upper-case and fullwidth spellings move the key; the same tool resolving the record passes", async () => {
    const verbatim = defineTool({
      name: 'send_email',
      action: 'welcome',
      targetType: 'email',
      generated: ['subject', 'body'],
      resolve: (a: Args) => ({ record: a.customerId, target: a.email }),
    });
    const report = await checkConformance(verbatim, { sample });
    expect(report.ok).toBe(false);
    // Whitespace and the format character never reach a key (dropped, refused); case and width do.
    // The address the model typed is a target spelled by the model too: K3 folds its case and
    // whitespace, but a fullwidth local part is another mailbox, so it moves the key as well.
    expect(report.problems.map((p) => `${p.input}: ${p.variant}`)).toEqual([
      'customerId: upper-case',
      'customerId: fullwidth compatibility form',
      'email: fullwidth compatibility form',
    ]);
    expect(report.problems[0]!.problem).toContain('resolve the record');

    const resolving: ToolDefinition<Args> = defineTool({
      ...verbatim,
      resolve: (a: Args) => ({ record: lookUp(a.customerId).id, target: lookUp(a.customerId).email }),
    });
    const passing = await checkConformance(resolving, { sample });
    expect(passing.problems).toEqual([]);
    expect(passing.ok).toBe(true);
    expect(passing.refused).toBe(1);
  });

  it('K3: a tool that declares its record ids case-insensitive has them case-folded, so only the fullwidth spelling still moves a verbatim key', async () => {
    const folding = defineTool({
      name: 'send_email',
      action: 'welcome',
      targetType: 'email',
      recordIds: 'case-insensitive',
      generated: ['subject', 'body'],
      resolve: (a: Args) => ({ record: a.customerId, target: a.email }),
    });
    const report = await checkConformance(folding, { sample: { ...sample, customerId: 'CUST-42' } });
    expect(report.key).toBe('v1/conformance-trigger/send_email/welcome/cust-42/email/anna%40example.com');
    expect(report.problems.filter((p) => p.input === 'customerId').map((p) => p.variant)).toEqual([
      'fullwidth compatibility form',
    ]);
  });

  it('K1, K4: `npm run conformance` fails (exit 1) for a tool keying on the typed customer id, naming the spellings that moved the key, and passes the same tool resolving it', () => {
    const conformance = (file: string) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'scripts/conformance.ts', file], { encoding: 'utf8' });
    const failing = conformance('tests/helpers/conformance/verbatim.ts');
    expect(failing.status, failing.stderr).toBe(1);
    expect(failing.stdout).toContain('FAIL  send_welcome_email/campaign_welcome');
    expect(failing.stdout).toContain('customerId [upper-case]: another spelling of an identity input moved the key');
    expect(failing.stdout).toContain('customerId [fullwidth compatibility form]');
    const passing = conformance('tests/helpers/conformance/resolving.ts');
    expect(passing.status, passing.stdout + passing.stderr).toBe(0);
    expect(passing.stdout).toMatch(
      /^ok {4}send_welcome_email\/campaign_welcome: 20 variations .* spellings of customerId/,
    );
  });
});
