export * from './campaign.ts';
export * from './seed.ts';
