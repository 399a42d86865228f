'use server';
// The signed-in person's own account: choosing a new password (Z7). Open to every role, and the one
// action allowed while a password someone else chose still has to be replaced.
import { consoleAction } from '@/lib/auth/decision.ts';
import { changePassword, changePasswordInput } from '@/lib/auth/password-change.ts';
import { setPreferences, setPreferencesInput } from '@/lib/notifications/preferences.ts';

export async function changePasswordAction(input: unknown) {
  return consoleAction('console.read', changePasswordInput, input, (g, i) => changePassword(g, i), undefined, {
    passwordChange: true,
  });
}

/** Which notifications the person gets, and how (audited in the same transaction). */
export async function setNotificationPreferencesAction(input: unknown) {
  return consoleAction('console.read', setPreferencesInput, input, (g, i) => setPreferences(g, i));
}
