// The CLI's commands: each reads what it decides on (the version a person would see on the page),
// shows it, and sends the decision naming that version (Z8), so a change made meanwhile by someone
// else is refused by the server rather than overwritten.
import { createWriteStream, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { verifyExport } from '../audit/verify-export.ts';
import { UsageError, type ManageClient } from './client.ts';
import { show, table, type Out } from './output.ts';
import { watchReplay } from './watch.ts';
import { applyFile } from './apply.ts';

export interface Args {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

type Row = Record<string, unknown>;

const need = (a: Args, i: number, what: string): string => {
  const v = a.positionals[i];
  if (!v) throw new UsageError(`missing ${what}`);
  return v;
};
const opt = (a: Args, name: string): string | undefined => {
  const v = a.values[name];
  return typeof v === 'string' ? v : undefined;
};
const required = (a: Args, name: string): string => {
  const v = opt(a, name);
  if (!v) throw new UsageError(`missing --${name}`);
  return v;
};
const enc = encodeURIComponent;

async function seenOfKeys(api: ManageClient, keys: string[]) {
  const seen: Record<string, unknown> = {};
  for (const key of keys) seen[key] = (await api.get<{ seen: unknown }>(`/targets/${enc(key)}`)).seen;
  return seen;
}

async function approval(api: ManageClient, id: string) {
  const { approvals } = await api.get<{ approvals: Row[] }>('/approvals');
  const found = approvals.find((r) => r.id === id);
  if (!found) throw new UsageError(`no approval request ${id} among those you can see`);
  return found as Row & { setHash: string; status: string; kind: string };
}

const done = (out: Out, data: unknown, what: string) => show(out, data, () => `${what}\n`);

export const COMMANDS: Record<string, (api: ManageClient, a: Args, out: Out) => Promise<number>> = {
  async 'runs list'(api, a, out) {
    const view = await api.get<{ rows: Row[]; next: string | null }>('/runs', {
      workflow: opt(a, 'workflow'),
      status: opt(a, 'status'),
      cursor: opt(a, 'cursor'),
    });
    show(
      out,
      view,
      () =>
        table(
          view.rows.map((r) => ({ ...r, status: r.shownStatus ?? r.status })),
          ['id', 'workflow', 'status', 'triggerId', 'planStatus', 'planItems', 'createdAt'],
        ) + (view.next ? `more: --cursor ${view.next}\n` : ''),
    );
    return 0;
  },

  async 'targets show'(api, a, out) {
    const key = need(a, 0, 'the effect key');
    const view = await api.get<Row & { seen: Row; transitions?: Row[] }>(`/targets/${enc(key)}`);
    show(
      out,
      view,
      () =>
        `${key}\n` +
        table([view.seen], ['epoch', 'state', 'changedAt']) +
        (view.transitions?.length
          ? `\n${table(view.transitions, ['epoch', 'fromState', 'toState', 'actorLabel', 'at'])}`
          : ''),
    );
    return 0;
  },

  async 'plan approve'(api, a, out) {
    const runId = need(a, 0, 'the run id');
    const { plan } = await api.get<{ plan: { id: string; itemsHash: string; status: string; itemCount: number } }>(
      `/runs/${enc(runId)}/plan`,
    );
    const result = await api.post('/plans/approve', {
      planId: plan.id,
      itemsHash: plan.itemsHash,
      seenStatus: plan.status,
      ...(opt(a, 'reason') ? { reason: opt(a, 'reason') } : {}),
    });
    done(
      out,
      result,
      `approved plan ${plan.id} (${plan.itemCount} targets, items hash ${plan.itemsHash.slice(0, 12)}…)`,
    );
    return 0;
  },

  async revoke(api, a, out) {
    const keys = a.positionals;
    if (!keys.length) throw new UsageError('missing the effect keys to revoke');
    const reason = required(a, 'reason');
    const result = await api.post<{ revoked: number; failed: Row[] }>('/effects/revoke', {
      keys,
      reason,
      seen: await seenOfKeys(api, keys),
    });
    show(
      out,
      result,
      () => `revoked ${result.revoked}\n${result.failed.length ? table(result.failed, ['key', 'error']) : ''}`,
    );
    return result.failed.length ? 1 : 0;
  },

  async 'bump request'(api, a, out) {
    const keys = a.positionals;
    if (!keys.length) throw new UsageError('missing the effect keys to bump');
    const result = await api.post<Row>('/bumps/request', {
      keys,
      reason: required(a, 'reason'),
      seen: await seenOfKeys(api, keys),
    });
    done(
      out,
      result,
      result.mode === 'requested'
        ? `requested: ${result.requestId} (a second operator approves)`
        : `bumped ${result.bumped}`,
    );
    return 0;
  },

  async 'bump approve'(api, a, out) {
    const r = await approval(api, need(a, 0, 'the request id'));
    const result = await api.post('/bumps/decide', {
      requestId: r.id,
      setHash: r.setHash,
      seenStatus: r.status,
      decision: 'approve',
      ...(opt(a, 'reason') ? { reason: opt(a, 'reason') } : {}),
    });
    done(out, result, `approved ${r.id}`);
    return 0;
  },

  async 'unknowns resolve'(api, a, out) {
    const key = need(a, 0, 'the effect key');
    const outcome = required(a, 'outcome');
    if (outcome !== 'sent' && outcome !== 'not_sent') throw new UsageError('--outcome is sent or not_sent');
    const seen = (await seenOfKeys(api, [key]))[key];
    const result = await api.post('/effects/resolve', {
      key,
      outcome,
      reason: required(a, 'reason'),
      seen,
      ...(outcome === 'sent' ? { receipt: required(a, 'receipt') } : {}),
    });
    done(out, result, `resolved ${key} as ${outcome}`);
    return 0;
  },

  async 'replay request'(api, a, out) {
    const runId = need(a, 0, 'the run id');
    const count = Number(required(a, 'count'));
    if (!Number.isInteger(count) || count < 1) throw new UsageError('--count is the number of targets you confirm');
    const view = await api.get<{ preview: { setHash: string } }>(`/runs/${enc(runId)}/replay`);
    const result = await api.post<Row>('/replays/request', {
      runId,
      confirmCount: count,
      setHash: view.preview.setHash,
      reason: required(a, 'reason'),
    });
    done(
      out,
      result,
      `replay ${result.replayId}: ${result.status}${result.approvalRequestId ? ` (approval ${result.approvalRequestId})` : ''}`,
    );
    return 0;
  },

  async 'replay approve'(api, a, out) {
    const r = await approval(api, need(a, 0, 'the approval request id'));
    const result = await api.post('/replays/approve', {
      approvalRequestId: r.id,
      setHash: r.setHash,
      seenStatus: r.status,
      ...(opt(a, 'reason') ? { reason: opt(a, 'reason') } : {}),
    });
    done(out, result, `approved ${r.id}`);
    return 0;
  },

  ...Object.fromEntries(
    (['start', 'pause', 'resume', 'cancel'] as const).map((verb) => [
      `replay ${verb}`,
      async (api: ManageClient, a: Args, out: Out) => {
        const replayId = need(a, 0, 'the replay id');
        const { status } = await api.get<{ status: string }>(`/replays/${enc(replayId)}/progress`);
        const reason = verb === 'cancel' ? required(a, 'reason') : opt(a, 'reason');
        const result = await api.post(`/replays/${verb}`, {
          replayId,
          seenStatus: status,
          ...(reason ? { reason } : {}),
        });
        done(out, result, `${verb}: ${replayId} (was ${status})`);
        return 0;
      },
    ]),
  ),

  async 'replay watch'(api, a, out) {
    return watchReplay(api, need(a, 0, 'the replay id'), out, Number(opt(a, 'interval') ?? 1000));
  },

  async apply(api, a, out) {
    return applyFile(
      api,
      required(a, 'file'),
      { dryRun: a.values['dry-run'] === true, secretsFile: opt(a, 'secrets-file') },
      out,
    );
  },

  async 'audit export'(api, a, out) {
    const res = await api.raw('GET', `/audit/export?format=${opt(a, 'format') ?? 'jsonl'}`);
    const file = opt(a, 'out');
    if (!res.body) return 1;
    const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
    if (file) await pipeline(body, createWriteStream(file));
    else for await (const chunk of body) out.write(String(chunk));
    return 0;
  },

  async 'audit verify'(_api, a, out) {
    const file = need(a, 0, 'the export file');
    const result = verifyExport(readFileSync(file, 'utf8'));
    show(out, result, () =>
      result.ok
        ? `ok: ${result.entries} entries in ${result.chains} chains verified${result.bundle ? ` (signed bundle at tree size ${result.bundle.treeSize})` : ''}\n`
        : `BROKEN at line ${result.line}: ${result.problem}\n`,
    );
    return result.ok ? 0 : 1;
  },
};

/** Commands that need no server. */
export const OFFLINE = new Set(['audit verify']);
