export * from './server.ts';
export * from './client.ts';
