// The workflow dimension of the authorization matrix (Z1, Z2, A4): role x workflow (granted / not
// granted) x every mutating console server action. Each cell makes a fresh person holding the role on
// one workflow only, makes the action's objects in a workflow, and calls the real server action with
// a valid same-origin session. Allowed exactly when the role may do it on that workflow (admin-only
// actions never, since they need an all-workflows grant); every refusal audited; and a read of the
// run by id answers like a missing one when the workflow is not granted.
import { randomUUID } from 'node:crypto';
import { ALL_WORKFLOWS_ONLY, scopeOf } from '@/lib/auth/grants.ts';
import { can } from '@/lib/auth/permissions.ts';
import { runHeader } from '@/lib/read-models/run-detail.ts';
import { makeRun, suffix } from '@/tests/helpers/factories.ts';
import type { Role } from '@/lib/db/generated/enums.ts';
import type { ProofRow } from '../section.ts';
import { HOST, pooled, ROLE_LIST, type AbuseEnv, type ProofUser } from './abuse-env.ts';
import { Fixtures } from './abuse-fixtures.ts';
import { matrixEntries, refusedFor } from './console-actions.ts';

/** A fresh person whose only grant is `role` on `workflow`. */
async function scopedUser(env: AbuseEnv, role: Role, workflow: string): Promise<ProofUser> {
  const user = await env.newUser(role, `scoped-${role}`);
  await env.db.roleGrant.deleteMany({ where: { userId: user.id } });
  await env.db.roleGrant.create({ data: { userId: user.id, role, workflow } });
  return user;
}

export async function workflowMatrix(env: AbuseEnv, rounds: number) {
  const names = (await matrixEntries(new Fixtures(env), env)).map((e) => e.name);
  const cells = names.flatMap((name) =>
    ROLE_LIST.flatMap((role) => [true, false].map((granted) => ({ name, role, granted }))),
  );
  let trials = 0,
    allowed = 0,
    refused = 0,
    wronglyAllowed = 0,
    unaudited = 0,
    wronglyRefused = 0,
    reads = 0,
    wrongReads = 0;
  const examples: string[] = [];
  for (let r = 0; r < rounds; r++) {
    await pooled(cells, 4, async ({ name, role, granted }) => {
      const workflow = `wf_grant_${suffix()}`;
      // The workflow the person holds the role on: this one, or one that exists but is another.
      const held = granted ? workflow : (await makeRun(env.db, `wf_elsewhere_${suffix()}`)).workflow;
      const user = await scopedUser(env, role, held);
      const entry = (await matrixEntries(new Fixtures(env, workflow), env)).find((e) => e.name === name)!;
      const requestId = randomUUID();
      const permitted = granted && can(role, entry.permission) && !ALL_WORKFLOWS_ONLY.includes(entry.permission);
      const result = await env.as(role, entry.call, {
        cookie: await env.cookieFor(user),
        origin: `https://${HOST}`,
        secFetchSite: 'same-origin',
        requestId,
      });
      trials++;
      const cell = `${name} as ${role} ${granted ? 'granted' : 'not granted'} the workflow`;
      if (result.ok) {
        allowed++;
        if (!permitted) {
          wronglyAllowed++;
          examples.push(`${cell} succeeded`);
        }
      } else {
        refused++;
        if (permitted) {
          wronglyRefused++;
          examples.push(`${cell} refused: ${result.error}`);
        } else if ((await refusedFor(env, requestId)) < 1) {
          unaudited++;
          examples.push(`${cell} refused without an audit entry`);
        }
      }
      // Reading: the person's run page of a run in this workflow exists exactly when it is granted.
      const run = await makeRun(env.db, workflow);
      const grants = await env.db.roleGrant.findMany({
        where: { userId: user.id },
        select: { role: true, workflow: true },
      });
      const seen = (await runHeader(env.db, run.runId, scopeOf(grants))) !== null;
      reads++;
      if (seen !== granted) {
        wrongReads++;
        examples.push(`run page as ${role} ${granted ? 'granted' : 'not granted'}: ${seen ? 'shown' : 'missing'}`);
      }
    });
  }
  return {
    row: {
      tried: `workflow grants matrix: ${names.length} mutating server actions x ${ROLE_LIST.length} roles x {workflow granted, not granted} (${cells.length} cells x ${rounds} rounds), plus the run page of each cell`,
      trials: trials + reads,
      lost: 0,
      duplicated: 0,
      unauthorized: wronglyAllowed + unaudited + wrongReads,
      observed: `${allowed} allowed (all by a role granted on the action's workflow), ${refused} refused, ${refused - unaudited - wronglyRefused} refusals found on the audit trail by request id; ${wronglyAllowed} allowed without a grant, ${unaudited} unaudited refusals, ${wronglyRefused} permitted calls refused; run page shown exactly when granted in ${reads - wrongReads}/${reads} reads${examples.length ? `: ${examples.slice(0, 4).join(' | ')}` : ''}`,
    } satisfies ProofRow,
    wronglyRefused,
  };
}
