// The console's change feed: one poller per process, running only while someone is subscribed. Each
// tick (about once a second) reads the audit trail past a watermark and the counters of unfinished
// replays, merges what moved into one LiveChange and hands it to every subscriber of this process
// (the open live pages). Nothing is held in the database session, so it works with any number of web
// processes and through a transaction-mode pooler (docs/ARCHITECTURE.md, "Live pages").
import { componentLogger } from '@/lib/ops/log.ts';
import { db, type Db } from '@/lib/db/client.ts';
import { env } from '@/lib/env.ts';
import { LedgerError } from '@/lib/core/errors.ts';
import { LIVE_TOPICS, mergeChanges, type LiveChange, type LiveTopic } from '@/lib/live/change.ts';
import { auditChangesSince, auditWatermark, isFinishedReplay, replayFingerprints } from '@/lib/live/reads.ts';

export type LiveListener = (change: LiveChange) => void;

export interface FeedOptions {
  intervalMs: number;
  /** Subscribers (open live pages) one process serves; more are refused (429). */
  maxSubscribers: number;
  /** Audit entries read per statement, and statements per tick before the tick gives up listing. */
  pageSize?: number;
  maxPages?: number;
  /** How long an id skipped by a later commit is looked for (a rolled-back id never appears). */
  missingTtlMs?: number;
}

type Part = { runId: string | null; workflow: string | null; topics: readonly LiveTopic[] };

/** Ids skipped past in one jump are looked for only up to this many (a sequence jump after a crash). */
const MAX_MISSING_PER_JUMP = 1000;
const MAX_MISSING = 10_000;

export class ChangeFeed {
  private readonly listeners = new Set<LiveListener>();
  private timer: NodeJS.Timeout | null = null;
  private primed: Promise<void> | null = null;
  private watermark = 0n;
  /** Ids below the watermark not seen yet, with when they were first missed. */
  private readonly missing = new Map<bigint, number>();
  /** Unfinished replays' last status and counters. */
  private replays = new Map<string, string>();
  private readonly log = componentLogger('live', true);
  /** Bumped when the poller stops, so a tick still running then does not schedule another. */
  private generation = 0;

  constructor(
    private readonly database: () => Db,
    private readonly options: FeedOptions,
  ) {}

  get subscribers(): number {
    return this.listeners.size;
  }

  /**
   * Adds a listener; resolves once the feed has its starting point, so every change committed after
   * this resolves is reported. Refused (rate_limited) when the process already serves its maximum.
   */
  async subscribe(listener: LiveListener): Promise<() => void> {
    if (this.listeners.size >= this.options.maxSubscribers) {
      throw new LedgerError(
        'rate_limited',
        `this console process already serves ${this.options.maxSubscribers} live pages; try again later`,
        { retryAfterSeconds: 30 },
      );
    }
    this.listeners.add(listener);
    const unsubscribe = () => {
      if (this.listeners.delete(listener) && this.listeners.size === 0) this.stop();
    };
    try {
      this.primed ??= this.prime();
      await this.primed;
    } catch (error) {
      unsubscribe();
      throw error;
    }
    return unsubscribe;
  }

  private async prime(): Promise<void> {
    try {
      this.watermark = await auditWatermark(this.database());
      const replays = await replayFingerprints(this.database(), []);
      this.replays = new Map(replays.map((r) => [r.replayId, r.print]));
    } catch (error) {
      this.primed = null;
      throw error;
    }
    this.schedule();
  }

  private schedule() {
    const generation = this.generation;
    if (this.listeners.size === 0) return;
    this.timer = setTimeout(() => {
      this.tick()
        .catch((error: unknown) => this.log.warn({ err: error }, 'live feed tick failed; retrying'))
        .finally(() => {
          if (generation === this.generation) this.schedule();
        });
    }, this.options.intervalMs);
    this.timer.unref?.();
  }

  private stop() {
    this.generation++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.primed = null;
    this.missing.clear();
    this.replays.clear();
  }

  /** One poll: what moved since the last one, sent to every listener (nothing when nothing moved). */
  async tick(): Promise<void> {
    if (!this.primed) return;
    const parts: Part[] = [];
    let flooded = false;
    const pageSize = this.options.pageSize ?? 2000;
    const maxPages = this.options.maxPages ?? 5;
    let missing = [...this.missing.keys()];
    for (let page = 0; ; page++) {
      if (page === maxPages) {
        flooded = true;
        break;
      }
      const rows = await auditChangesSince(this.database(), this.watermark, missing, pageSize);
      missing = [];
      const now = Date.now();
      for (const row of rows) {
        if (this.missing.delete(row.id) || row.id <= this.watermark) {
          parts.push(row);
          continue;
        }
        if (row.id - this.watermark - 1n <= BigInt(MAX_MISSING_PER_JUMP)) {
          for (let id = this.watermark + 1n; id < row.id; id++) this.missing.set(id, now);
        }
        this.watermark = row.id;
        parts.push(row);
      }
      if (rows.length < pageSize) break;
    }
    if (flooded) {
      // Too much moved to list: start again from the newest entry and let every live page refresh.
      this.watermark = await auditWatermark(this.database());
      this.missing.clear();
    }
    this.forgetOldMissing();
    parts.push(...(await this.replayChanges()));
    const change = flooded ? { runs: null, workflows: [], topics: [...LIVE_TOPICS] } : mergeChanges(parts);
    if (!change) return;
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.log.warn({ err: error }, 'a live listener failed');
      }
    }
  }

  private forgetOldMissing() {
    const ttl = this.options.missingTtlMs ?? 60_000;
    const cutoff = Date.now() - ttl;
    for (const [id, since] of this.missing) {
      if (since < cutoff || this.missing.size > MAX_MISSING) this.missing.delete(id);
    }
  }

  private async replayChanges(): Promise<Part[]> {
    const rows = await replayFingerprints(this.database(), [...this.replays.keys()]);
    const parts: Part[] = [];
    const next = new Map<string, string>();
    for (const r of rows) {
      if (this.replays.get(r.replayId) !== r.print) {
        parts.push({ runId: r.runId, workflow: r.workflow, topics: ['replay'] });
      }
      if (!isFinishedReplay(r.print)) next.set(r.replayId, r.print);
    }
    this.replays = next;
    return parts;
  }
}

const holder = globalThis as unknown as { __ledgerLiveFeed?: ChangeFeed };

/** This process's feed (kept on globalThis so Next's dev reloads do not start a second poller). */
export function liveFeed(): ChangeFeed {
  holder.__ledgerLiveFeed ??= new ChangeFeed(db, {
    intervalMs: env().LIVE_POLL_MS,
    maxSubscribers: env().LIVE_MAX_CONNECTIONS,
  });
  return holder.__ledgerLiveFeed;
}
