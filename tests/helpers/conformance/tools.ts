// Two definitions of one tool for `npm run conformance` (tests/unit/sdk-conformance.test.ts): one
// keys on the customer id as the model typed it, the other looks the customer up first.
import { defineTool } from '@/lib/sdk/index.ts';

interface Args {
  customerId: string;
  subject: string;
  body: string;
}

/** The team's customer directory, keyed without case, surrounding space or width (NFKC). */
const directory = new Map([['cust-0301', { id: 'cust-0301', email: 'mara@example.com' }]]);
function customer(typed: string) {
  const found = directory.get(typed.normalize('NFKC').trim().toLowerCase());
  if (!found) throw new Error(`no customer ${JSON.stringify(typed)}`);
  return found;
}

export const sample: Args = { customerId: 'cust-0301', subject: 'Welcome, Mara!', body: 'Your workspace is ready.' };

export const verbatim = defineTool({
  name: 'send_welcome_email',
  action: 'campaign_welcome',
  targetType: 'email',
  generated: ['subject', 'body'],
  resolve: (a: Args) => ({ record: a.customerId, target: customer(a.customerId).email }),
});

export const resolving = defineTool({
  ...verbatim,
  resolve: (a: Args) => {
    const found = customer(a.customerId);
    return { record: found.id, target: found.email };
  },
});
