'use server';
// The signed-in person's inbox: mark one notification, or all of them, read. Open to every role;
// the command only ever touches the person's own rows.
import { revalidatePath } from 'next/cache';
import { consoleAction } from '@/lib/auth/decision.ts';
import { markAllRead, markAllReadInput, markRead, markReadInput } from '@/lib/notifications/read-marks.ts';

export async function markNotificationReadAction(input: unknown) {
  const result = await consoleAction('console.read', markReadInput, input, (g, i) => markRead(g, i));
  revalidatePath('/inbox');
  return result;
}

export async function markAllNotificationsReadAction(input: unknown) {
  const result = await consoleAction('console.read', markAllReadInput, input, (g, i) => markAllRead(g, i));
  revalidatePath('/inbox');
  return result;
}
