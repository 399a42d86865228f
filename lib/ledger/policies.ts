// Epoch-bump policies (E3): deterministic rules registered before execution whose inputs come from
// the workflow definition or the trigger, never from tool arguments or anything a model wrote.
// The test: could any token the model produced change whether the bump happens? Then refuse.

export type PolicyInputSource = 'workflow' | 'trigger';
export type InputSource = PolicyInputSource | 'tool_argument' | 'model';

export interface EpochPolicy {
  name: string;
  description: string;
  inputsFrom: readonly PolicyInputSource[];
}

const registry = new Map<string, EpochPolicy>();

export function registerEpochPolicy(policy: EpochPolicy): void {
  const bad = policy.inputsFrom.filter((s) => s !== 'workflow' && s !== 'trigger');
  if (bad.length)
    throw new Error(
      `policy ${policy.name}: inputs may come only from the workflow or the trigger, not ${bad.join(', ')}`,
    );
  registry.set(policy.name, Object.freeze({ ...policy, inputsFrom: [...policy.inputsFrom] }));
}

export function getEpochPolicy(name: string): EpochPolicy | undefined {
  return registry.get(name);
}

/** Why a bump request is model-influenced, or null when every input is outside the model's reach. */
export function modelInfluence(
  policy: EpochPolicy | undefined,
  inputs: Record<string, { source: InputSource }>,
): string | null {
  for (const [name, input] of Object.entries(inputs)) {
    if (input.source === 'tool_argument' || input.source === 'model') {
      return `input "${name}" comes from ${input.source === 'model' ? 'the model' : 'tool arguments'}: a model token could decide this bump (E3)`;
    }
    if (policy && !policy.inputsFrom.includes(input.source)) {
      return `input "${name}" comes from the ${input.source}, which policy ${policy.name} did not register`;
    }
  }
  return null;
}
