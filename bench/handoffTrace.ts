/**
 * Where a hand-off's time goes: the `handoff` scenario's queue (W waiters over N sessions, all in
 * this process), traced at the sockets. Every frame the process writes and reads is recorded with
 * its time on the bench's clock; for each hand-off (in the order the lock passed), the trace finds
 * the holder's delete, the notification of that deletion read by the next holder's session, and
 * the delete's reply, and reports the medians of:
 *
 * - release → delete written: the client's work before the request leaves;
 * - delete written → the next holder's session reads the deletion's notification: the server's
 *   part (with whatever the process read and ran in between);
 * - notification read → the next holder's acquire returns: the client's work after it;
 * - where the holder's delete reply is read, against that notification.
 *
 * zk-recipes' waiters claim on that notification; the raw floor's relist first, so its last
 * segment holds a getChildren2 round trip. Recording costs a little on every frame, in every
 * library alike: compare segments, not the hand-off p50 with the bench's.
 *
 *   node -r ts-node/register/transpile-only bench/handoffTrace.ts [--waiters 1000] [--sessions 4] [--rounds 3] [--libs zk-recipes,floor-raw] [--ensemble 3 | --connect host:port]
 */
import { Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { external, startEnsemble, startStandalone } from './deployment';
import { clockUs } from './peers/clock';
import { RawFloorClient } from './peers/rawFloor';
import type { HandoffRun } from './peers/types';
import { ZkRecipesPeer } from './peers/zkRecipes';
import { acquisitionOrder, handoffLatencies } from './scenarios/handoff';
import { ServerProbe } from './server';
import { fmt, median } from './stats';
import { runToExit } from './script';

const SESSION_TIMEOUT_MS = 30_000;
const OP_DELETE = 2;
const XID_NOTIFICATION = -1;
const EVENT_NODE_DELETED = 2;
/** The queue of the unreported first round. */
const WARM_UP_WAITERS = 1000;

/** What a traced library offers: the bench's hand-off queue. */
interface Traced {
  open(sessions: number): Promise<void>;
  close(): Promise<void>;
  queue(path: string, waiters: number): Promise<void>;
  run(): Promise<HandoffRun>;
}

type Event =
  | { kind: 'delete'; at: number; socket: number; xid: number; path: string }
  | { kind: 'notification'; at: number; socket: number; type: number; path: string }
  | { kind: 'reply'; at: number; socket: number; xid: number };

/** The frames of every socket of this process, while `recording`. */
class SocketTrace {
  recording = false;
  readonly events: Event[] = [];
  private readonly ids = new WeakMap<Socket, number>();
  private nextId = 0;
  /** Bytes read of a frame not yet whole, per socket. */
  private readonly partial = new WeakMap<Socket, Buffer>();

  install(): void {
    const written = (socket: Socket, bytes: Buffer) => {
      if (this.recording) this.written(socket, bytes);
    };
    const read = (socket: Socket, chunk: Buffer) => this.read(socket, chunk);
    const proto = Socket.prototype as unknown as {
      write: (...args: unknown[]) => boolean;
      emit: (event: string | symbol, ...args: unknown[]) => boolean;
    };
    const write = proto.write;
    const emit = proto.emit;
    proto.write = function (this: Socket, ...args: unknown[]): boolean {
      if (Buffer.isBuffer(args[0])) written(this, args[0]);
      return write.apply(this, args);
    };
    proto.emit = function (this: Socket, event: string | symbol, ...args: unknown[]): boolean {
      if (event === 'data' && Buffer.isBuffer(args[0])) read(this, args[0]);
      return emit.call(this, event, ...args);
    };
  }

  private id(socket: Socket): number {
    let id = this.ids.get(socket);
    if (id === undefined) this.ids.set(socket, (id = this.nextId++));
    return id;
  }

  /** Request frames: length, xid, type, then (a delete) the path. Writes hold whole frames. */
  private written(socket: Socket, bytes: Buffer): void {
    const at = clockUs();
    for (let off = 0; off + 12 <= bytes.length; ) {
      const length = bytes.readInt32BE(off);
      const type = bytes.readInt32BE(off + 8);
      if (type === OP_DELETE) {
        this.events.push({ kind: 'delete', at, socket: this.id(socket), xid: bytes.readInt32BE(off + 4), path: readString(bytes, off + 12) });
      }
      off += 4 + length;
    }
  }

  /** Reply frames: length, xid, zxid, err, then (a notification) type, state and path. */
  private read(socket: Socket, chunk: Buffer): void {
    const held = this.partial.get(socket);
    const bytes = held ? Buffer.concat([held, chunk]) : chunk;
    const at = clockUs();
    let off = 0;
    while (off + 4 <= bytes.length && off + 4 + bytes.readInt32BE(off) <= bytes.length) {
      const length = bytes.readInt32BE(off);
      if (this.recording && length >= 16) {
        const xid = bytes.readInt32BE(off + 4);
        const id = this.id(socket);
        if (xid === XID_NOTIFICATION) this.events.push({ kind: 'notification', at, socket: id, type: bytes.readInt32BE(off + 20), path: readString(bytes, off + 28) });
        else this.events.push({ kind: 'reply', at, socket: id, xid });
      }
      off += 4 + length;
    }
    if (off < bytes.length) this.partial.set(socket, bytes.subarray(off));
    else this.partial.delete(socket);
  }
}

function readString(bytes: Buffer, at: number): string {
  const length = bytes.readInt32BE(at);
  return length < 0 ? '' : bytes.toString('utf8', at + 4, at + 4 + length);
}

/** One run's hand-offs, split by the trace. */
interface Segments {
  handOffs: number[];
  toDelete: number[];
  toNotification: number[];
  toAcquired: number[];
  /** The holder's delete reply read, less the next holder's notification read (µs; negative: before). */
  replyVsNotification: number[];
  /** Hand-offs whose next holder read the notification in the holder's session (the line did not change sessions there). */
  sameSession: number;
  untraced: number;
}

function split(run: HandoffRun, events: readonly Event[]): Segments {
  const order = acquisitionOrder(run);
  const s: Segments = { handOffs: handoffLatencies(run).latencies, toDelete: [], toNotification: [], toAcquired: [], replyVsNotification: [], sameSession: 0, untraced: 0 };
  let from = 0;
  for (let j = 1; j < order.length; j++) {
    const released = run.releasedUs[order[j - 1]];
    const acquired = run.acquiredUs[order[j]];
    while (from < events.length && events[from].at < released) from++;
    const tail = events.slice(from);
    const del = tail.find((e): e is Extract<Event, { kind: 'delete' }> => e.kind === 'delete');
    if (!del) {
      s.untraced++;
      continue;
    }
    const gone = (e: Event, other: boolean): e is Extract<Event, { kind: 'notification' }> =>
      e.kind === 'notification' && e.type === EVENT_NODE_DELETED && e.path === del.path && (e.socket !== del.socket) === other && e.at >= del.at && e.at <= acquired;
    // The next holder's session: another than the holder's when the line spans sessions.
    const told = tail.find((e) => gone(e, true)) ?? tail.find((e) => gone(e, false));
    if (!told || told.kind !== 'notification') {
      s.untraced++;
      continue;
    }
    const reply = tail.find((e) => e.kind === 'reply' && e.socket === del.socket && e.xid === del.xid);
    if (told.socket === del.socket) s.sameSession++;
    s.toDelete.push(del.at - released);
    s.toNotification.push(told.at - del.at);
    s.toAcquired.push(acquired - told.at);
    if (reply) s.replyVsNotification.push(reply.at - told.at);
  }
  return s;
}

function zkRecipes(spread: readonly string[]): Traced {
  const peer = new ZkRecipesPeer([...spread], SESSION_TIMEOUT_MS, {});
  return {
    open: (n) => peer.open(n),
    close: () => peer.closeSessions(),
    queue: (path, w) => peer.handoffQueue(path, w, 0),
    run: () => peer.handoffRun(),
  };
}

function rawFloor(spread: readonly string[]): Traced {
  const client = new RawFloorClient([...spread], SESSION_TIMEOUT_MS);
  return {
    open: (n) => client.open(n),
    close: () => client.close(),
    queue: (path, w) => client.handoffQueue(path, w, 0),
    run: () => client.handoffRun(),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      waiters: { type: 'string', default: '1000' },
      sessions: { type: 'string', default: '4' },
      rounds: { type: 'string', default: '3' },
      libs: { type: 'string', default: 'zk-recipes,floor-raw' },
      ensemble: { type: 'string' },
      connect: { type: 'string' },
    },
  });
  const waiters = Number(values.waiters);
  const sessions = Number(values.sessions);
  const rounds = Number(values.rounds);
  const deployment = values.connect ? external(values.connect) : values.ensemble ? await startEnsemble(Number(values.ensemble)) : await startStandalone();
  const probe = ServerProbe.forConnectString(deployment.connectString);
  const makers: Record<string, (spread: readonly string[]) => Traced> = { 'zk-recipes': zkRecipes, 'floor-raw': rawFloor };
  const libs = (values.libs ?? '').split(',').map((name) => {
    const make = makers[name];
    if (!make) throw new Error(`--libs: unknown library ${name} (zk-recipes, floor-raw)`);
    return [name, make(deployment.spread)] as const;
  });
  const trace = new SocketTrace();
  trace.install();
  const root = `/handoffTrace-${Date.now()}`;
  try {
    for (let round = 0; round <= rounds; round++) {
      for (const [name, lib] of libs) {
        await lib.open(sessions);
        try {
          // The first round warms the servers and this process up, unreported: cold, an
          // ensemble's first hand-offs take several times as long (see the bench's warm-up).
          const queued = round === 0 ? Math.max(waiters, WARM_UP_WAITERS) : waiters;
          const base = await probe.watches();
          await lib.queue(`${root}/${name}-${round}`, queued);
          await probe.waitForWatches(base + queued, 120_000 + queued * 200);
          await probe.waitQuiet(10_000);
          trace.events.length = 0;
          trace.recording = true;
          const run = await lib.run();
          trace.recording = false;
          if (round === 0) continue;
          const s = split(run, trace.events);
          const m = (values: number[]) => (values.length === 0 ? 'n/a' : fmt(median(values), 0));
          console.log(
            `${name}, ${waiters} waiters over ${sessions} sessions, round ${round}: hand-off p50 ${m(s.handOffs)} µs = release → delete written ${m(s.toDelete)}` +
              ` → next holder's session reads the deletion's notification ${m(s.toNotification)} → acquire returns ${m(s.toAcquired)};` +
              ` the holder's delete reply read ${m(s.replyVsNotification)} µs after that notification (p50s over ${s.toDelete.length} hand-offs, ${s.sameSession} of them within one session; ${s.untraced} untraced)`,
          );
        } finally {
          trace.recording = false;
          await lib.close();
        }
      }
    }
  } finally {
    await deployment.close();
  }
}

runToExit(main);
