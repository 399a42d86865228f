// What every scripted-agent runner takes and gives back.
import type { EffectHold, GuardOptions } from '@/lib/sdk/adapters/guard.ts';
import type { SandboxProvider } from '@/lib/sdk/sandbox.ts';
import type { Welcome } from './team-tool.ts';

export interface RunOptions {
  guard: GuardOptions<Welcome>;
  provider: SandboxProvider;
  /** The scripted model calls send_welcome_email once per entry, one call per turn, in order. */
  calls: Welcome[];
  crashAfter?: string;
}

/** One tool call as the model saw its result: ok is false when the model was told it failed. */
export interface SeenResult {
  to: string;
  ok: boolean;
  text: string;
}

export interface RunReport {
  seen: SeenResult[];
  holds: EffectHold[];
}
