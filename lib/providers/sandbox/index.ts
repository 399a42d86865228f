export * from './server.ts';
// The client's one home is the SDK (agent teams send through it from the package).
export * from '@/lib/sdk/sandbox.ts';
