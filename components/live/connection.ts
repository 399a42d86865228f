// The browser's one connection to the console's change feed (/api/console/events), shared by every
// live part of the page: one EventSource per tab however many components listen. It reconnects with
// exponential backoff (and jitter, so many tabs do not return at the same instant after a restart),
// treats a silent connection as dead after missing heartbeats, and after a reconnect tells every
// listener that anything may have changed, since changes made while it was away were not sent.
import { LIVE_TOPICS, type LiveChange } from '@/lib/live/change.ts';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'signed-out';

type ChangeListener = (change: LiveChange) => void;
type StatusListener = (status: LiveStatus) => void;

const URL_PATH = '/api/console/events';
/** The server sends a heartbeat every 15 s; three missed ones mean the connection is gone. */
const SILENCE_MS = 45_000;
const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
/** Listeners that leave and come back within this time (navigating between live pages) keep the stream. */
const LINGER_MS = 5000;

const ANYTHING: LiveChange = { runs: null, workflows: [], topics: [...LIVE_TOPICS] };

const changeListeners = new Set<ChangeListener>();
const statusListeners = new Set<StatusListener>();
let source: EventSource | null = null;
let status: LiveStatus = 'connecting';
let failures = 0;
let everReady = false;
let retryTimer: ReturnType<typeof setTimeout> | null = null;
let silenceTimer: ReturnType<typeof setTimeout> | null = null;
let lingerTimer: ReturnType<typeof setTimeout> | null = null;

function setStatus(next: LiveStatus) {
  status = next;
  for (const l of statusListeners) l(next);
}

function clearTimer(timer: ReturnType<typeof setTimeout> | null) {
  if (timer) clearTimeout(timer);
  return null;
}

function watchSilence() {
  silenceTimer = clearTimer(silenceTimer);
  silenceTimer = setTimeout(() => fail(), SILENCE_MS);
}

function disconnect() {
  source?.close();
  source = null;
  retryTimer = clearTimer(retryTimer);
  silenceTimer = clearTimer(silenceTimer);
}

function fail() {
  disconnect();
  if (changeListeners.size === 0 && statusListeners.size === 0) return;
  setStatus('reconnecting');
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** failures);
  failures++;
  retryTimer = setTimeout(connect, ceiling / 2 + Math.random() * (ceiling / 2));
}

function connect() {
  disconnect();
  if (status !== 'reconnecting') setStatus('connecting');
  const es = new EventSource(URL_PATH);
  source = es;
  watchSilence();
  es.addEventListener('ready', () => {
    failures = 0;
    watchSilence();
    setStatus('live');
    // Whatever changed while the stream was down was not sent: every page checks once.
    if (everReady) for (const l of changeListeners) l(ANYTHING);
    everReady = true;
  });
  es.addEventListener('heartbeat', watchSilence);
  es.addEventListener('change', (event) => {
    watchSilence();
    const change = JSON.parse((event as MessageEvent<string>).data) as LiveChange;
    for (const l of changeListeners) l(change);
  });
  es.addEventListener('signed-out', () => {
    disconnect();
    setStatus('signed-out');
  });
  // The browser's own retry would come back at a fixed pace; this one backs off.
  es.onerror = () => {
    if (source === es) fail();
  };
}

/** Listens to the feed; the first listener opens the stream, the last one closes it (after a moment). */
export function subscribeLive(onChange: ChangeListener, onStatus: StatusListener): () => void {
  changeListeners.add(onChange);
  statusListeners.add(onStatus);
  lingerTimer = clearTimer(lingerTimer);
  if (!source && !retryTimer && status !== 'signed-out') connect();
  onStatus(status);
  return () => {
    changeListeners.delete(onChange);
    statusListeners.delete(onStatus);
    if (changeListeners.size > 0 || statusListeners.size > 0) return;
    lingerTimer = clearTimer(lingerTimer);
    lingerTimer = setTimeout(() => {
      disconnect();
      everReady = false;
      failures = 0;
      status = 'connecting';
    }, LINGER_MS);
  };
}
