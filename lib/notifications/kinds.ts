// The notification kinds and channels: what a person can be told, who is told, and the default
// channel when they chose nothing. The account page, the fan-out and the docs all read this table.
import type { Permission } from '@/lib/auth/permissions.ts';

export const NOTIFICATION_KINDS = {
  'approval.waiting': {
    label: 'A four-eyes request waits for you',
    who: 'every person who may approve it, except the requester',
  },
  'approval.approved': { label: 'Your request was approved', who: 'the requester' },
  'approval.rejected': { label: 'Your request was rejected', who: 'the requester' },
  'approval.expired': { label: 'Your request expired undecided', who: 'the requester' },
  'replay.finished': { label: 'Your replay finished', who: 'the person who requested the replay' },
  'replay.failed': {
    label: 'Your replay finished with failed or unknown targets',
    who: 'the person who requested the replay',
  },
} as const;

export type NotificationKind = keyof typeof NOTIFICATION_KINDS;
export const NOTIFICATION_KIND_NAMES = Object.keys(NOTIFICATION_KINDS) as NotificationKind[];

/** inbox: in the console only; email: in the console and by email; off: not at all. */
export const CHANNELS = ['inbox', 'email', 'off'] as const;
export type Channel = (typeof CHANNELS)[number];
export const DEFAULT_CHANNEL: Channel = 'email';

export const CHANNEL_LABELS: Record<Channel, string> = {
  inbox: 'In the console only',
  email: 'Email too',
  off: 'Off',
};

/** The permission that decides an approval request of each kind: its holders are the eligible approvers. */
export const APPROVING_PERMISSION: Record<string, Permission> = {
  'effect.bump': 'effect.bump.approve',
  replay: 'replay.approve',
};
