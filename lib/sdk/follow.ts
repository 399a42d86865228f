// R3: an "already existed" reply is a pointer; the prior object's state decides. Absence is never
// revocation: a prior object that cannot be found leaves the effect unknown.
import type { Classification, Provider } from './provider.ts';

export type Followed =
  { status: 'done'; receipt: string } | { status: 'stuck' | 'unknown'; evidence: Record<string, unknown> };

const errorText = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

export async function followReference(
  verdict: Extract<Classification, { outcome: 'already_existed' }>,
  provider: Partial<Pick<Provider, 'followReference'>> | undefined,
): Promise<Followed> {
  const evidence = { ...verdict.evidence, alreadyExisted: verdict.reference };
  const follow = provider?.followReference?.bind(provider);
  if (!follow)
    return {
      status: 'unknown',
      evidence: { ...evidence, why: 'already existed, and the provider cannot look the prior object up' },
    };
  try {
    const prior = await follow(verdict.reference);
    if (!prior.found)
      return {
        status: 'unknown',
        evidence: { ...evidence, why: 'the prior object the provider pointed at could not be found' },
      };
    if (prior.state === 'failed')
      return {
        status: 'stuck',
        evidence: {
          ...evidence,
          priorState: 'failed',
          why: 'the provider dedupes onto a prior object that failed permanently (S6)',
        },
      };
    return { status: 'done', receipt: prior.receipt };
  } catch (error) {
    return {
      status: 'unknown',
      evidence: { ...evidence, error: errorText(error), why: 'following the prior object failed' },
    };
  }
}
