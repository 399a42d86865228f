// The three framework runners by name, for the tests and the child process.
import { runAgents } from './openai-agents.ts';
import { runAi } from './ai.ts';
import { runLangChain } from './langchain.ts';
import type { RunOptions, RunReport } from './types.ts';

export const FRAMEWORKS = { ai: runAi, 'openai-agents': runAgents, langchain: runLangChain } as const;
export type Framework = keyof typeof FRAMEWORKS;

export const runAgent = (framework: Framework, options: RunOptions): Promise<RunReport> =>
  FRAMEWORKS[framework](options);
