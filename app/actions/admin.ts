'use server';
// Admin server actions (Z1: admin only), each authorized here and audited by its command.
import { consoleAction } from '@/lib/auth/guard.ts';
import {
  createRuntimeKey,
  createRuntimeKeyInput,
  revokeRuntimeKey,
  revokeRuntimeKeyInput,
  saveTool,
  saveToolInput,
} from '@/lib/auth/admin-commands.ts';
import { addGrant, addGrantInput, removeGrant, removeGrantInput } from '@/lib/auth/grant-commands.ts';
import { createUser, createUserInput, updateUser, updateUserInput } from '@/lib/auth/users.ts';

export async function createUserAction(input: unknown) {
  return consoleAction(
    'users.manage',
    createUserInput,
    input,
    (g, i) => createUser(g, i),
    (i) => ({ type: 'user', id: i.email }),
  );
}

export async function updateUserAction(input: unknown) {
  return consoleAction(
    'users.manage',
    updateUserInput,
    input,
    (g, i) => updateUser(g, i),
    (i) => ({ type: 'user', id: i.userId }),
  );
}

export async function createRuntimeKeyAction(input: unknown) {
  return consoleAction(
    'runtime_keys.manage',
    createRuntimeKeyInput,
    input,
    (g, i) => createRuntimeKey(g, i),
    (i) => ({ type: 'runtime_key', id: i.name }),
  );
}

export async function revokeRuntimeKeyAction(input: unknown) {
  return consoleAction(
    'runtime_keys.manage',
    revokeRuntimeKeyInput,
    input,
    (g, i) => revokeRuntimeKey(g, i),
    (i) => ({ type: 'runtime_key', id: i.keyId }),
  );
}

export async function saveToolAction(input: unknown) {
  return consoleAction(
    'tools.manage',
    saveToolInput,
    input,
    (g, i) => saveTool(g, i),
    (i) => ({ type: 'tool', id: i.name }),
  );
}

export async function addGrantAction(input: unknown) {
  return consoleAction(
    'users.manage',
    addGrantInput,
    input,
    (g, i) => addGrant(g, i),
    (i) => ({ type: 'user', id: i.userId }),
  );
}

export async function removeGrantAction(input: unknown) {
  return consoleAction(
    'users.manage',
    removeGrantInput,
    input,
    (g, i) => removeGrant(g, i),
    (i) => ({ type: 'user', id: i.grantId }),
  );
}
