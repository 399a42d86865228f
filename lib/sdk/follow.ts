// R3: an "already existed" reply is a pointer; the prior object's state decides. Absence is never
// revocation: a prior object that cannot be found leaves the effect unknown.
import type { Classification, Provider } from './provider.ts';

export type Followed =
  { status: 'done'; receipt: string } | { status: 'stuck' | 'unknown'; evidence: Record<string, unknown> };

const errorText = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

/** `timeoutMs`: how long the provider may take to answer; a lookup that hangs past it leaves the
 *  effect unknown (the lease would otherwise run out first, and the effect with it). */
export async function followReference(
  verdict: Extract<Classification, { outcome: 'already_existed' }>,
  provider: Partial<Pick<Provider, 'followReference'>> | undefined,
  timeoutMs = 30_000,
): Promise<Followed> {
  const evidence = { ...verdict.evidence, alreadyExisted: verdict.reference };
  const follow = provider?.followReference?.bind(provider);
  if (!follow)
    return {
      status: 'unknown',
      evidence: { ...evidence, why: 'already existed, and the provider cannot look the prior object up' },
    };
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Raced as well as aborted: a provider client that ignores the signal still cannot hold the agent.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError');
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    const prior = await Promise.race([follow(verdict.reference, controller.signal), deadline]);
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
  } finally {
    clearTimeout(timer);
  }
}
