// The settings an admin changes (people, grants, runtime keys, tools, a declarative setup) and a
// person's own access tokens, as Decisions shared by the console's actions and the management API
// (./decisions.ts has the decisions on runs, plans, effects and replays).
import {
  createRuntimeKey,
  createRuntimeKeyInput,
  revokeRuntimeKey,
  revokeRuntimeKeyInput,
  saveTool,
  saveToolInput,
} from '../auth/admin-commands.ts';
import {
  createAccessToken,
  createAccessTokenInput,
  revokeAccessToken,
  revokeAccessTokenInput,
} from '../auth/access-tokens.ts';
import { canOn } from '../auth/grants.ts';
import { addGrant, addGrantInput, removeGrant, removeGrantInput } from '../auth/grant-commands.ts';
import { createUser, createUserInput, updateUser, updateUserInput } from '../auth/users.ts';
import { applySetup } from './apply.ts';
import { applyInput } from './apply-document.ts';
import { decision } from './decisions.ts';

// People, keys and tools (Z1, Z6: admin only, through an all-workflows grant)
export const createUserDecision = decision({
  permission: 'users.manage',
  schema: createUserInput,
  run: (g, i) => createUser(g, i),
  subject: (i) => ({ type: 'user', id: i.email }),
});
export const updateUserDecision = decision({
  permission: 'users.manage',
  schema: updateUserInput,
  run: (g, i) => updateUser(g, i),
  subject: (i) => ({ type: 'user', id: i.userId }),
});
export const addGrantDecision = decision({
  permission: 'users.manage',
  schema: addGrantInput,
  run: (g, i) => addGrant(g, i),
  subject: (i) => ({ type: 'user', id: i.userId }),
});
export const removeGrantDecision = decision({
  permission: 'users.manage',
  schema: removeGrantInput,
  run: (g, i) => removeGrant(g, i),
  subject: (i) => ({ type: 'user', id: i.grantId }),
});
export const createRuntimeKeyDecision = decision({
  permission: 'runtime_keys.manage',
  schema: createRuntimeKeyInput,
  run: (g, i) => createRuntimeKey(g, i),
  subject: (i) => ({ type: 'runtime_key', id: i.name }),
});
export const revokeRuntimeKeyDecision = decision({
  permission: 'runtime_keys.manage',
  schema: revokeRuntimeKeyInput,
  run: (g, i) => revokeRuntimeKey(g, i),
  subject: (i) => ({ type: 'runtime_key', id: i.keyId }),
});
export const saveToolDecision = decision({
  permission: 'tools.manage',
  schema: saveToolInput,
  run: (g, i) => saveTool(g, i),
  subject: (i) => ({ type: 'tool', id: i.name }),
});

// Personal access tokens: the console's own door only (a token cannot mint or revoke tokens, since
// the management API has no operation for it). Open to every role: a token is its own person.
export const createAccessTokenDecision = decision({
  permission: 'console.read',
  schema: createAccessTokenInput,
  run: (g, i) => createAccessToken(g, i),
});
export const revokeAccessTokenDecision = decision({
  permission: 'console.read',
  schema: revokeAccessTokenInput,
  run: (g, i) => revokeAccessToken({ ...g, mayManageUsers: canOn(g.user.grants, 'users.manage', null) }, i),
});

// Declarative setup (effect-ledger apply): tools, runtime keys, grants and stored notification routes
// are each admin-only through an all-workflows grant, so one check of users.manage is the check of all.
export const applySetupDecision = decision({
  permission: 'users.manage',
  schema: applyInput,
  run: (g, i) => applySetup(g, i),
});
