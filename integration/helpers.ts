import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { ZkClient, isZkError, type ConnectionState, type ZkClientOptions } from '../src';
import { RetryNTimes } from '../src/retry';
import { TRANSPORT_NAMES, type TransportName } from '../src/client/chooseTransport';

/** One factor scales every bounded wait in the integration tests (ZK_TEST_TIMING=2 on a slow machine). */
export const TIMING = Number(process.env.ZK_TEST_TIMING ?? 1) || 1;

/** `ms` scaled by the timing factor. */
export function timing(ms: number): number {
  return Math.round(ms * TIMING);
}

/**
 * The transport the integration tests run on: ZK_TEST_TRANSPORT=protocol|native, 'protocol' by
 * default. CI runs the suite once with each.
 */
export const TEST_TRANSPORT: TransportName = testTransport(process.env.ZK_TEST_TRANSPORT);

function testTransport(value: string | undefined): TransportName {
  if (value === undefined || value === '') return 'protocol';
  if (!TRANSPORT_NAMES.includes(value as TransportName)) throw new Error(`ZK_TEST_TRANSPORT must be one of ${TRANSPORT_NAMES.join(', ')}, got ${value}`);
  return value as TransportName;
}

/** A fresh root path, so test files and tests never share nodes. */
export function randomRoot(prefix = 'it'): string {
  return `/${prefix}-${randomBytes(6).toString('hex')}`;
}

/** Waits for `predicate` to hold, checking on every call of `poke` or every `everyMs`; rejects after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = timing(20_000), everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Records every state a client reports, and waits for the next occurrence of a state. */
export class StateRecorder {
  readonly states: ConnectionState[] = [];
  readonly sessions: bigint[] = [];
  private waiters: Array<{ state: ConnectionState; from: number; resolve: () => void }> = [];

  constructor(client: ZkClient) {
    client.on('stateChanged', (state) => {
      this.states.push(state);
      this.sessions.push(client.sessionId);
      for (const w of [...this.waiters]) {
        if (w.state === state) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
  }

  /** A mark for `waitFor`: only states recorded after it count. */
  mark(): number {
    return this.states.length;
  }

  /**
   * Resolves once the client is in a new session: a LOST recorded after `from`, then a RECONNECTED
   * after that LOST. (A RECONNECTED alone may be into the same session: taking a session over to
   * expire it can first drop the client and let it back in.)
   */
  async waitForNewSession(from: number, timeoutMs = timing(30_000)): Promise<void> {
    await this.waitFor('LOST', from, timeoutMs);
    await this.waitFor('RECONNECTED', this.states.indexOf('LOST', from) + 1, timeoutMs);
  }

  /** Resolves when `state` has been recorded after `from`; rejects after `timeoutMs`. */
  waitFor(state: ConnectionState, from: number, timeoutMs = timing(30_000)): Promise<void> {
    if (this.states.indexOf(state, from) >= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`no ${state} within ${timeoutMs} ms; states so far: ${this.states.join(', ')}`));
      }, timeoutMs);
      const waiter = {
        state,
        from,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.waiters.push(waiter);
    });
  }

  since(from: number): ConnectionState[] {
    return this.states.slice(from);
  }
}

/** Makes clients for one test file and closes them all in `closeAll()`. */
export class Clients {
  private readonly open: ZkClient[] = [];

  /** A started client; retries are short so faults show quickly. */
  async connect(options: ZkClientOptions, waitMs = timing(20_000)): Promise<ZkClient> {
    const client = this.create(options);
    client.start();
    await client.blockUntilConnected({ timeoutMs: waitMs });
    return client;
  }

  create(options: ZkClientOptions): ZkClient {
    const client = new ZkClient({
      transport: TEST_TRANSPORT,
      sessionTimeoutMs: 10_000,
      connectionTimeoutMs: timing(10_000),
      retryPolicy: new RetryNTimes({ n: 10, sleepMsBetweenRetries: 100 }),
      ...options,
    });
    this.open.push(client);
    return client;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.open.splice(0).map((c) => c.close()));
  }
}

/** Resolves with the first watch event on a node, or rejects after `timeoutMs`. */
export function nextEvent<T>(register: (resolve: (value: T) => void) => void, what: string, timeoutMs = timing(20_000)): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${what} within ${timeoutMs} ms`)), timeoutMs);
    register((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

/**
 * Sets a one-shot `exists` watch on `path` and resolves once the server has set it, so an event
 * that follows cannot be missed. `next` settles with the first event's type, or rejects after
 * `timeoutMs`; `existed` says whether the node was there when the watch was set.
 */
export async function watchNode(client: ZkClient, path: string, timeoutMs = timing(20_000)): Promise<{ existed: boolean; next: Promise<string> }> {
  let fire: (type: string) => void = () => undefined;
  const next = nextEvent<string>((done) => (fire = done), `an event on ${path}`, timeoutMs);
  // An unobserved rejection would fail the run; callers that never await `next` lose nothing.
  next.catch(() => undefined);
  const stat = await client.exists(path, { watcher: (e) => fire(e.type) });
  return { existed: stat !== null, next };
}

/** The children of `path`; none when the node is gone (an emptied container is soon deleted by the server). */
export async function childrenOf(client: ZkClient, path: string): Promise<string[]> {
  try {
    return await client.getChildren(path);
  } catch (err) {
    if (isZkError(err, 'NONODE')) return [];
    throw err;
  }
}

/** Resolves with the reason once `signal` aborts; rejects after `timeoutMs`. */
export function aborted(signal: AbortSignal, timeoutMs = timing(20_000)): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`signal not aborted within ${timeoutMs} ms`)), timeoutMs);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(signal.reason);
    });
  });
}

/** A protected sequential name as Curator writes it: `_c_<uuid>-<name>NNNNNNNNNN`. */
export function protectedSequential(name: string): RegExp {
  return new RegExp(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-${name}\\d{10}$`);
}

/**
 * Whether `promise` has settled, as the microtasks queued so far and one turn of the event loop
 * tell: for a check made after the event that would have settled it.
 */
export async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise<void>((resolve) => setImmediate(resolve));
  return settled;
}

/** Whether the server shows a watch by `sessionId` on `node` (wchp: a path, then one tab-indented session per watcher). */
export async function isWatching(server: { fourLetterWord(word: string): Promise<string> }, node: string, sessionId: bigint): Promise<boolean> {
  const lines = (await server.fourLetterWord('wchp')).split('\n');
  const at = lines.indexOf(node);
  if (at < 0) return false;
  const watchers = lines.slice(at + 1);
  const end = watchers.findIndex((line) => !line.startsWith('\t'));
  return watchers.slice(0, end < 0 ? undefined : end).some((line) => line.trim() === `0x${sessionId.toString(16)}`);
}

/**
 * Runs `work` with a counter in place: `install` puts it where what is counted gets built, and
 * returns what takes it away again. Resolves with how many were built, and what `work` gave.
 */
async function countedDuring<T>(install: (count: () => void) => () => void, work: () => Promise<T>): Promise<{ built: number; value: T }> {
  let built = 0;
  const uninstall = install(() => built++);
  try {
    return { value: await work(), built };
  } finally {
    uninstall();
  }
}

/**
 * Counts the AbortControllers built while `work` runs. Our code builds them with the global
 * constructor, so a counting subclass in its place sees every one.
 */
export function controllersBuiltBy<T>(work: () => Promise<T>): Promise<{ built: number; value: T }> {
  return countedDuring((count) => {
    const Original = globalThis.AbortController;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        count();
      }
    };
    return () => {
      globalThis.AbortController = Original;
    };
  }, work);
}

/**
 * Counts the EventEmitters built while `work` runs, Node's own (sockets, streams) included: every
 * one runs EventEmitter.init (not in Node's typings, there since its first releases), which the
 * constructor looks up as a property, so a counting replacement there sees it.
 */
export function emittersBuiltBy<T>(work: () => Promise<T>): Promise<{ built: number; value: T }> {
  return countedDuring((count) => {
    const emitter = EventEmitter as unknown as { init: (...args: unknown[]) => unknown };
    const original = emitter.init;
    emitter.init = function (this: unknown, ...args: unknown[]) {
      count();
      return original.apply(this, args);
    };
    return () => {
      emitter.init = original;
    };
  }, work);
}

/** The member of an ensemble whose connections list this client's session, by `cons`; paused members are not asked. */
export async function memberOf<M extends { readonly isPaused: boolean; fourLetterWord(word: string, timeoutMs?: number): Promise<string> }>(
  members: readonly M[],
  client: ZkClient,
): Promise<M | undefined> {
  const sid = `sid=0x${client.sessionId.toString(16)}`;
  for (const m of members) {
    if (m.isPaused) continue;
    const cons = await m.fourLetterWord('cons', 2_000).catch(() => '');
    if (cons.includes(sid)) return m;
  }
  return undefined;
}
