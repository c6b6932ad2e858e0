import * as net from 'node:net';
import { ZkError } from '../errors';
import { OPEN_ACL, type Transport, type TransportEvents, type TransportOptions, type WatchEvent } from '../transport/Transport';
import { encodeRecord, framed, SAMPLE_STAT, ScriptedServer, type ClientFrame, type ScriptedConnection } from '../../test/protocol/ScriptedServer';
import { ErrorCode, EventType, OpCode, Xid } from './opcodes';
import { ProtocolError } from './ProtocolError';
import { ProtocolTransport } from './ProtocolTransport';
import {
  AuthPacketRecord,
  GetChildren2ResponseRecord,
  GetDataResponseRecord,
  GetEphemeralsResponseRecord,
  PathRecord,
  PathResponseRecord,
  PathTypeRecord,
  PathWatchRecord,
  SetWatches2Record,
  SetWatchesRecord,
} from './records';

const transports: ProtocolTransport[] = [];
const servers: ScriptedServer[] = [];

afterEach(async () => {
  // Servers first: a transport whose connection is gone closes at once.
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(transports.splice(0).map((t) => t.close()));
});

async function server(): Promise<ScriptedServer> {
  const s = await ScriptedServer.start();
  servers.push(s);
  return s;
}

function transport(options: Partial<TransportOptions> & { connectString: string }): ProtocolTransport {
  const t = new ProtocolTransport({ sessionTimeoutMs: 3_000, ...options });
  transports.push(t);
  return t;
}

/** Resolves with the event's argument the next time `t` emits it; rejects after `ms`. */
function next<E extends keyof TransportEvents>(t: Transport, event: E, ms = 5_000): Promise<Parameters<TransportEvents[E]>[0]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no '${event}' within ${ms} ms`)), ms);
    const listener = ((arg: never) => {
      clearTimeout(timer);
      t.off(event, listener);
      resolve(arg);
    }) as TransportEvents[E];
    t.on(event, listener);
  });
}

/** A transport connected to a fresh scripted server, and that server's first connection. */
async function connected(options: Partial<TransportOptions> & { chroot?: string } = {}): Promise<{ s: ScriptedServer; t: ProtocolTransport; c: ScriptedConnection }> {
  const s = await server();
  const { chroot, ...rest } = options;
  const t = transport({ ...rest, connectString: s.connectString + (chroot ?? '') });
  const up = next(t, 'connected');
  const c = await s.next();
  await c.handshake();
  await up;
  return { s, t, c };
}

function pathOf(frame: ClientFrame): string {
  return PathRecord.read(frame.reader()).path;
}

async function rejection(p: Promise<unknown>): Promise<ZkError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ZkError);
    return err as ZkError;
  }
  throw new Error('expected a rejection');
}

describe('ProtocolTransport: handshake and session', () => {
  it('asks for a new session as the Java client does, and takes the one granted', async () => {
    const s = await server();
    const t = transport({ connectString: s.connectString, sessionTimeoutMs: 4_000 });
    expect(t.sessionId).toBe(0n);
    const up = next(t, 'connected');
    const c = await s.next();
    const request = await c.handshake({ sessionId: 0x1_0000_0000_abcdn, timeOut: 3_000, password: Buffer.alloc(16, 0x5a) });
    expect(request).toEqual({ protocolVersion: 0, lastZxidSeen: 0n, timeOut: 4_000, sessionId: 0n, passwd: Buffer.alloc(16), readOnly: false });
    await up;
    expect(t.sessionId).toBe(0x1_0000_0000_abcdn);
    expect(t.sessionPassword).toBe('5a'.repeat(16));
    expect(t.negotiatedSessionTimeoutMs).toBe(3_000);
    expect(t.lastHeardAt).toBeGreaterThan(0);
    expect(t.lastConnectError).toBeUndefined();
  });

  it('reads a ConnectResponse without the readOnly byte (servers before 3.4)', async () => {
    const s = await server();
    const t = transport({ connectString: s.connectString });
    const up = next(t, 'connected');
    await (await s.next()).handshake({ readOnlyByte: false });
    await up;
    expect(t.sessionId).toBe(0x1234n);
  });

  it('attaches to a given session with its id and password', async () => {
    const s = await server();
    transport({ connectString: s.connectString, sessionId: 0xfeedn, sessionPassword: 'AB'.repeat(16) });
    const request = await (await s.next()).handshake();
    expect(request.sessionId).toBe(0xfeedn);
    expect(request.passwd).toEqual(Buffer.alloc(16, 0xab));
  });

  it.each([
    ['a timeout of 0', { timeOut: 0 }],
    ['a session id of 0', { sessionId: 0n }],
  ])('takes %s in the answer as the server saying the session expired', async (_what, answer) => {
    const s = await server();
    const t = transport({ connectString: s.connectString, sessionId: 0xfeedn, sessionPassword: '00'.repeat(16) });
    const closed = next(t, 'closed');
    const waiting = t.getData('/a');
    await (await s.next()).handshake(answer);
    expect(await closed).toBe('expired');
    expect((await rejection(waiting)).code).toBe('SESSIONEXPIRED');
    expect((await rejection(t.exists('/b'))).code).toBe('SESSIONEXPIRED');
    expect(t.isClosed).toBe(true);
    expect(t.sessionId).toBe(0n);
  });
});

describe('ProtocolTransport: listeners', () => {
  it('a listener that throws is logged; the others still hear, and the connection carries on', async () => {
    const s = await server();
    const t = transport({ connectString: s.connectString });
    t.on('connected', () => {
      throw new Error('listener bug');
    });
    const up = next(t, 'connected');
    const c = await s.next();
    await c.handshake();
    await up;
    c.autoReply();
    expect((await t.getData('/a')).data.toString()).toBe('data');
  });
});

describe('ProtocolTransport: requests', () => {
  it('pipelines requests and matches replies to them in order', async () => {
    const { t, c } = await connected();
    const calls = [t.getData('/a'), t.exists('/b'), t.create('/c', Buffer.from('x'), 'PERSISTENT', OPEN_ACL)];
    const frames = [await c.next(), await c.next(), await c.next()];
    expect(frames.map((f) => [f.xid, f.type])).toEqual([
      [1, OpCode.getData],
      [2, OpCode.exists],
      [3, OpCode.create],
    ]);
    expect(PathWatchRecord.read(frames[0].reader())).toEqual({ path: '/a', watch: false });
    c.reply(1, 0, encodeRecord(GetDataResponseRecord, { data: Buffer.from('A'), stat: SAMPLE_STAT }));
    c.reply(2, ErrorCode.noNode);
    c.reply(3, 0, encodeRecord(PathResponseRecord, { path: '/c' }));
    expect((await calls[0]) as unknown).toEqual({ data: Buffer.from('A'), stat: SAMPLE_STAT });
    expect(await calls[1]).toBeNull();
    expect(await calls[2]).toBe('/c');
  });

  it("turns a server error into a ZkError with the path, whose stack holds the caller's frame", async () => {
    const { t, c } = await connected();
    async function readTheMissingNode() {
      return await t.getData('/missing');
    }
    const read = readTheMissingNode();
    read.catch(() => undefined);
    c.reply((await c.next()).xid, -101);
    const err = await rejection(read);
    expect(err).toMatchObject({ code: 'NONODE', path: '/missing', rc: -101 });
    expect(err.stack).toContain('readTheMissingNode');
  });

  it('drops the connection on a reply out of order: CONNECTIONLOSS for every request, then a new connection', async () => {
    const { s, t, c } = await connected();
    const first = t.getData('/a');
    const second = t.getData('/b');
    await c.next();
    await c.next();
    const connecting = next(t, 'connecting');
    c.reply(2, 0, encodeRecord(GetDataResponseRecord, { data: Buffer.alloc(0), stat: SAMPLE_STAT }));
    const cause = await connecting;
    expect(cause).toBeInstanceOf(ProtocolError);
    expect(cause).toMatchObject({ kind: 'unexpectedReply' });
    for (const call of [first, second]) {
      const err = await rejection(call);
      expect(err.code).toBe('CONNECTIONLOSS');
      expect(err.cause).toBeInstanceOf(ProtocolError);
    }
    const again = await s.next();
    expect((await again.handshake()).sessionId).toBe(0x1234n);
  });

  it.each([
    ['a frame over maxFrameBytes', 'frameTooLarge', (c: ScriptedConnection) => c.socket.write(Buffer.from('7fffffff', 'hex'))],
    ['a negative frame length', 'malformed', (c: ScriptedConnection) => c.socket.write(Buffer.from('fffffff0', 'hex'))],
    ['a reply whose body is cut short', 'malformed', (c: ScriptedConnection, xid: number) => c.reply(xid, 0, Buffer.from('0000000a6162', 'hex'))],
    ['a connection that ends inside a frame', 'truncated', (c: ScriptedConnection) => c.socket.end(Buffer.from('000000400000', 'hex'))],
    ['a reply that answers nothing', 'unexpectedReply', (c: ScriptedConnection, xid: number) => c.reply(xid + 50)],
  ])('on %s: a typed ProtocolError, CONNECTIONLOSS for the request, and a new connection that works', async (_what, kind, misbehave) => {
    const { s, t, c } = await connected({ maxFrameBytes: 4096 });
    const read = t.getData('/a');
    const frame = await c.next();
    const connecting = next(t, 'connecting');
    misbehave(c, frame.xid);
    expect(await connecting).toMatchObject({ name: 'ProtocolError', kind });
    const err = await rejection(read);
    expect(err.code).toBe('CONNECTIONLOSS');
    expect(err.cause).toMatchObject({ kind });
    const up = next(t, 'connected');
    const again = await s.next();
    await again.handshake();
    await up;
    again.autoReply();
    expect((await t.getData('/a')).data.toString()).toBe('data');
  });

  it('on a reset in the middle of a reply: CONNECTIONLOSS at once, and a new connection', async () => {
    const { s, t, c } = await connected();
    const read = t.getData('/a');
    const { xid } = await c.next();
    const reply = framed(Buffer.concat([Buffer.alloc(16), encodeRecord(GetDataResponseRecord, { data: Buffer.alloc(1000, 1), stat: SAMPLE_STAT })]));
    reply.writeInt32BE(xid, 4);
    c.socket.write(reply.subarray(0, 600));
    await new Promise((r) => setTimeout(r, 20));
    c.reset();
    expect((await rejection(read)).code).toBe('CONNECTIONLOSS');
    await (await s.next()).handshake();
  });

  it('sends requests made while disconnected after the next handshake, and fails them if that attempt fails', async () => {
    const { s, t, c } = await connected();
    const connecting = next(t, 'connecting');
    c.reset();
    await connecting;
    const queued = t.getData('/queued');
    const doomed = s.next().then((c2) => c2.reset());
    await doomed;
    expect((await rejection(queued)).code).toBe('CONNECTIONLOSS');
    const later = t.getData('/later');
    const c3 = await s.next();
    await c3.handshake();
    const frame = await c3.next();
    expect(pathOf(frame)).toBe('/later');
    c3.reply(frame.xid, 0, encodeRecord(GetDataResponseRecord, { data: Buffer.alloc(0), stat: SAMPLE_STAT }));
    await later;
  });
});

describe('ProtocolTransport: timers', () => {
  it('pings after a third of the session timeout without sending, and does not count pings as requests', async () => {
    const { t, c } = await connected({ sessionTimeoutMs: 900 });
    const startedAt = performance.now();
    const ping = await c.next({ pings: true });
    const idleMs = performance.now() - startedAt;
    expect(ping.xid).toBe(Xid.ping);
    expect(ping.type).toBe(OpCode.ping);
    expect(idleMs).toBeGreaterThan(250);
    expect(idleMs).toBeLessThan(600);
    c.reply(Xid.ping, 0, Buffer.alloc(0), -1n);
    const read = t.getData('/a');
    const frame = await c.next();
    expect(frame.xid).toBe(1);
    c.autoReply();
    c.reply(frame.xid, 0, encodeRecord(GetDataResponseRecord, { data: Buffer.alloc(0), stat: SAMPLE_STAT }));
    await read;
  });

  it('drops a connection that has not heard from the server for two thirds of the timeout', async () => {
    const { s, t, c } = await connected({ sessionTimeoutMs: 900 });
    const read = t.getData('/a');
    await c.next();
    const startedAt = performance.now();
    const cause = await next(t, 'connecting');
    const silentMs = performance.now() - startedAt;
    expect(String(cause)).toMatch(/read timeout 600 ms/);
    expect(silentMs).toBeGreaterThan(500);
    expect(silentMs).toBeLessThan(1_500);
    expect((await rejection(read)).code).toBe('CONNECTIONLOSS');
    // The server granted its timeout; the transport keeps the session and tries again.
    expect((await (await s.next()).handshake()).sessionId).toBe(0x1234n);
  });

  it('after a read timeout, waits between attempts at most a fifth of the time left for the session', async () => {
    // 10 s: waits of up to 1 s, and up to 2 s once every server has been tried. The read timeout
    // leaves 3.3 s before the server may expire the session, which the client gives up before.
    const { s, t } = await connected({ sessionTimeoutMs: 10_000 });
    await next(t, 'connecting', 9_000);
    // The first attempt is closed unanswered: the next one is after every server was tried.
    const first = await s.next();
    const refusedAt = performance.now();
    first.socket.destroy();
    await s.next();
    // Without the bound: the spin delay of 1 s, and up to 1 s more.
    expect(performance.now() - refusedAt).toBeLessThan(950);
  }, 20_000);

  it('gives up on a server that accepts but does not answer the handshake, after the timeout divided among the servers', async () => {
    const silent = await server();
    const hosts = Array.from({ length: 4 }, () => silent.connectString).join(',');
    const t = transport({ connectString: hosts, sessionTimeoutMs: 2_000 });
    await silent.next();
    const startedAt = performance.now();
    const cause = await next(t, 'connecting');
    const waitedMs = performance.now() - startedAt;
    // 2000 ms among 4 servers: 500 ms.
    expect(waitedMs).toBeGreaterThan(400);
    expect(waitedMs).toBeLessThan(1_200);
    expect(String(cause)).toMatch(/timed out after \d+ ms \(no answer to the handshake\)/);
    expect(t.lastConnectError?.message).toContain(silent.connectString);
  });

  it('with one server that does not answer the handshake, tries again after a third of the session timeout, not all of it', async () => {
    // ZooKeeper 3.8, while it starts, can leave open the socket of a connection it refused: a wait
    // of the whole session timeout (the Java client's, with one server) would cost the session.
    const silent = await server();
    const t = transport({ connectString: silent.connectString, sessionTimeoutMs: 3_000 });
    await silent.next();
    const startedAt = performance.now();
    const cause = await next(t, 'connecting');
    const waitedMs = performance.now() - startedAt;
    expect(waitedMs).toBeGreaterThan(900);
    expect(waitedMs).toBeLessThan(2_500);
    expect(String(cause)).toMatch(/timed out after \d+ ms \(no answer to the handshake\)/);
    // The next attempt comes while the session could still be alive.
    await silent.next();
    await t.close();
  });

  it('rotates through the servers; a refused one is named in lastConnectError', async () => {
    const s = await server();
    const closedPort = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    // The order is random; whichever server comes first, the live one is reached, and
    // lastConnectError is cleared once connected.
    for (let i = 0; i < 4; i++) {
      const t = transport({ connectString: `127.0.0.1:${closedPort},${s.connectString}` });
      const up = next(t, 'connected');
      const c = await s.next();
      await c.handshake();
      await up;
      expect(t.lastConnectError).toBeUndefined();
      c.autoReply();
      await t.close();
    }
    const t = transport({ connectString: `127.0.0.1:${closedPort},127.0.0.1:${closedPort}` });
    const cause = await next(t, 'connecting');
    expect(String(cause)).toMatch(new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${closedPort}`));
    expect(t.lastConnectError?.message).toContain(`127.0.0.1:${closedPort}`);
  });
});

describe('ProtocolTransport: reconnecting in the same session', () => {
  it('sends, in the Java client order: the handshake with the last zxid, the credentials, the watches, then waiting requests', async () => {
    const { s, t, c } = await connected();
    const auth = t.addAuth('digest', 'u:p');
    const authFrame = await c.next();
    expect([authFrame.xid, authFrame.type]).toEqual([Xid.auth, OpCode.auth]);
    expect(AuthPacketRecord.read(authFrame.reader())).toEqual({ type: 0, scheme: 'digest', auth: Buffer.from('u:p') });
    c.reply(Xid.auth, 0, Buffer.alloc(0), -1n);
    await auth;
    const heard: string[] = [];
    const data = t.getData('/d', (e) => heard.push(`d:${e.type}`));
    const exist = t.exists('/e', (e) => heard.push(`e:${e.type}`));
    const child = t.getChildren('/c', (e) => heard.push(`c:${e.type}`));
    c.reply((await c.next()).xid, 0, encodeRecord(GetDataResponseRecord, { data: Buffer.alloc(0), stat: SAMPLE_STAT }), 0x500n);
    c.reply((await c.next()).xid, ErrorCode.noNode, Buffer.alloc(0), 0x501n);
    c.zxid = 0x501n;
    c.autoReply();
    await Promise.all([data, exist, child]);
    // The getChildren reply's, the last seen.
    const lastZxid = 0x502n;

    const connecting = next(t, 'connecting');
    c.reset();
    await connecting;
    const waiting = t.sync('/waiting');
    const c2 = await s.next();
    const handshake = await c2.handshake();
    expect(handshake).toMatchObject({ sessionId: 0x1234n, passwd: Buffer.alloc(16, 0xab), lastZxidSeen: lastZxid });
    const [reAuth, watches, request] = [await c2.next(), await c2.next(), await c2.next()];
    expect([reAuth.xid, reAuth.type]).toEqual([Xid.auth, OpCode.auth]);
    // Numbered like any request, after the three before the drop (the Java client does the same).
    expect([watches.xid, watches.type]).toEqual([4, OpCode.setWatches]);
    expect(SetWatchesRecord.read(watches.reader())).toEqual({ relativeZxid: lastZxid, dataWatches: ['/d'], existWatches: ['/e'], childWatches: ['/c'] });
    expect([request.type, pathOf(request)]).toEqual([OpCode.sync, '/waiting']);
    c2.reply(Xid.auth, 0, Buffer.alloc(0), -1n);
    c2.reply(watches.xid, 0, Buffer.alloc(0), -1n);
    c2.reply(request.xid, 0, encodeRecord(PathResponseRecord, { path: '/waiting' }));
    await waiting;
    // The watches live on: the server fires them on the new connection.
    c2.notify(EventType.nodeCreated, '/e');
    c2.notify(EventType.nodeDeleted, '/d');
    await new Promise((r) => setTimeout(r, 50));
    expect(heard).toEqual(['e:created', 'd:deleted']);
  });

  it('uses SetWatches2 when persistent watches are kept', async () => {
    const { s, t, c } = await connected();
    c.autoReply();
    await t.addWatch('/p', 'PERSISTENT', () => undefined);
    await t.addWatch('/r', 'PERSISTENT_RECURSIVE', () => undefined);
    c.reset();
    const c2 = await s.next();
    await c2.handshake();
    const watches = await c2.next();
    expect(watches.type).toBe(OpCode.setWatches2);
    expect(SetWatches2Record.read(watches.reader())).toMatchObject({ persistentWatches: ['/p'], persistentRecursiveWatches: ['/r'], dataWatches: [] });
  });
});

describe('ProtocolTransport: watches', () => {
  it('fires every watcher of the path and kind from one notification, once, with the zxid when the server sends it', async () => {
    const { t, c } = await connected();
    c.autoReply();
    const heard: WatchEvent[] = [];
    const a = (e: WatchEvent) => heard.push(e);
    const b = (e: WatchEvent) => heard.push({ ...e, path: `b:${e.path}` });
    await t.getData('/n', a);
    await t.getData('/n', b);
    await t.exists('/n', a);
    c.notify(EventType.nodeDataChanged, '/n', 0x77n);
    c.notify(EventType.nodeDataChanged, '/n');
    await t.sync('/');
    await new Promise((r) => setImmediate(r));
    expect(heard).toEqual([
      { type: 'changed', path: '/n', zxid: 0x77n },
      { type: 'changed', path: 'b:/n', zxid: 0x77n },
    ]);
  });

  it('keeps a watch only when the server set it: exists on a missing node yes, getData on one no', async () => {
    const { t, c } = await connected();
    const heard: string[] = [];
    const exists = t.exists('/gone', (e) => heard.push(`exists:${e.type}`));
    c.reply((await c.next()).xid, ErrorCode.noNode);
    expect(await exists).toBeNull();
    const read = t.getData('/gone', (e) => heard.push(`getData:${e.type}`));
    c.reply((await c.next()).xid, ErrorCode.noNode);
    expect((await rejection(read)).code).toBe('NONODE');
    c.notify(EventType.nodeCreated, '/gone');
    c.autoReply();
    await t.sync('/');
    await new Promise((r) => setImmediate(r));
    expect(heard).toEqual(['exists:created']);
  });

  it('runs a watcher only after the code that set it has seen the reply, even when both arrive together', async () => {
    const { t, c } = await connected();
    const order: string[] = [];
    const read = (async () => {
      await t.getData('/n', () => order.push('watcher'));
      order.push('reply seen');
    })();
    const { xid } = await c.next();
    const reply = framed(Buffer.concat([Buffer.alloc(16), encodeRecord(GetDataResponseRecord, { data: Buffer.alloc(0), stat: SAMPLE_STAT })]));
    reply.writeInt32BE(xid, 4);
    c.socket.write(reply);
    c.notify(EventType.nodeDeleted, '/n');
    await read;
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['reply seen', 'watcher']);
  });

  it('a watcher that throws is logged, and the others still run', async () => {
    const { t, c } = await connected();
    c.autoReply();
    const heard: string[] = [];
    await t.getChildren('/p', () => {
      throw new Error('watcher bug');
    });
    await t.getChildren('/p', (e) => heard.push(e.type));
    c.notify(EventType.nodeChildrenChanged, '/p');
    await t.sync('/');
    await new Promise((r) => setImmediate(r));
    expect(heard).toEqual(['child']);
  });

  it('removes one watcher with checkWatches and all of a kind with removeWatches; removed watchers hear it', async () => {
    const { t, c } = await connected();
    c.autoReply();
    const heard: string[] = [];
    const one = (e: WatchEvent) => heard.push(`one:${e.type}`);
    const two = (e: WatchEvent) => heard.push(`two:${e.type}`);
    await t.getData('/w', one);
    await t.getData('/w', two);
    await t.removeWatches('/w', 'data', one);
    await t.removeWatches('/w', 'any');
    const sent = c.received.filter((f) => f.type === OpCode.checkWatches || f.type === OpCode.removeWatches);
    expect(sent.map((f) => [f.type, PathTypeRecord.read(f.reader())])).toEqual([
      [OpCode.checkWatches, { path: '/w', type: 2 }],
      [OpCode.removeWatches, { path: '/w', type: 3 }],
    ]);
    expect(heard).toEqual(['one:removed', 'two:removed']);
    expect((await rejection(t.removeWatches('/w', 'any'))).code).toBe('NOWATCHER');
    expect((await rejection(t.checkWatches('/w', 'data'))).code).toBe('NOWATCHER');
  });

  it("takes the server's watch away too when the last watcher here goes, unless a watch may be being set", async () => {
    const { t, c } = await connected();
    c.autoReply();
    const [a, b, kid] = [() => undefined, () => undefined, () => undefined];
    await t.getData('/w', a);
    await t.getChildren('/w', kid);
    // The children watcher still needs the server's watch on /w, but not its data table.
    await t.removeWatches('/w', 'data', a);
    await t.removeWatches('/w', 'children', kid);
    // A read that may set the watch again is in flight: the server's watch must stay.
    await t.getData('/w', b);
    const inFlight = t.getData('/w', a);
    await t.removeWatches('/w', 'data', b);
    await inFlight;
    const sent = c.received.filter((f) => f.type === OpCode.checkWatches || f.type === OpCode.removeWatches);
    expect(sent.map((f) => [f.type, PathTypeRecord.read(f.reader()).type])).toEqual([
      [OpCode.removeWatches, 2],
      [OpCode.removeWatches, 3],
      [OpCode.checkWatches, 2],
    ]);
  });

  it('removes watches locally while disconnected when asked to', async () => {
    const { t, c } = await connected();
    c.autoReply();
    const heard: string[] = [];
    await t.exists('/w', (e) => heard.push(e.type));
    const connecting = next(t, 'connecting');
    c.reset();
    await connecting;
    await t.removeWatches('/w', 'data', undefined, true);
    expect(heard).toEqual(['removed']);
  });
});

describe('ProtocolTransport: chroot', () => {
  it('prefixes paths on the way out and strips them from created paths, events and ephemerals', async () => {
    const { t, c } = await connected({ chroot: '/app' });
    const heard: string[] = [];
    const created = t.create('/x-', Buffer.alloc(0), 'PERSISTENT_SEQUENTIAL', OPEN_ACL);
    const create = await c.next();
    expect(pathOf(create)).toBe('/app/x-');
    c.reply(create.xid, 0, encodeRecord(PathResponseRecord, { path: '/app/x-0000000001' }));
    expect(await created).toBe('/x-0000000001');

    const root = t.getChildren('/', (e) => heard.push(`${e.type} ${e.path}`));
    const listing = await c.next();
    expect(pathOf(listing)).toBe('/app');
    c.reply(listing.xid, 0, encodeRecord(GetChildren2ResponseRecord, { children: ['x-0000000001'], stat: SAMPLE_STAT }));
    expect((await root).children).toEqual(['x-0000000001']);
    c.notify(EventType.nodeChildrenChanged, '/app');

    const ephemerals = t.getEphemerals('/');
    const asked = await c.next();
    // The server matches the prefix as text: '/app/' keeps '/apple' out.
    expect(pathOf(asked)).toBe('/app/');
    c.reply(asked.xid, 0, encodeRecord(GetEphemeralsResponseRecord, { ephemerals: ['/app/e', '/app/d/e'] }));
    expect(await ephemerals).toEqual(['/e', '/d/e']);
    expect(heard).toEqual(['child /']);
  });
});

describe('ProtocolTransport: credentials', () => {
  it('ends the session with authFailed when the server refuses credentials', async () => {
    const { t, c } = await connected();
    const closed = next(t, 'closed');
    const auth = t.addAuth('nosuch', 'x');
    const waiting = t.getData('/a');
    expect((await c.next()).type).toBe(OpCode.auth);
    await c.next();
    c.reply(Xid.auth, ErrorCode.authFailed, Buffer.alloc(0), -1n);
    expect(await closed).toBe('authFailed');
    expect((await rejection(auth)).code).toBe('AUTHFAILED');
    expect((await rejection(waiting)).code).toBe('AUTHFAILED');
    expect((await rejection(t.sync('/'))).code).toBe('AUTHFAILED');
  });
});

describe('ProtocolTransport: close', () => {
  it('ends the session with closeSession and resolves on the answer', async () => {
    const { t, c } = await connected();
    const closed = next(t, 'closed');
    const closing = t.close();
    expect(t.isClosed).toBe(true);
    const frame = await c.next();
    expect(frame.type).toBe(OpCode.closeSession);
    c.reply(frame.xid);
    await closing;
    expect(await closed).toBe('closed');
    await c.closed;
    expect((await rejection(t.getData('/a'))).code).toBe('SESSIONEXPIRED');
  });

  it('resolves after a short bound when the server does not answer, and never rejects', async () => {
    const { t, c } = await connected({ sessionTimeoutMs: 900 });
    const startedAt = performance.now();
    await t.close();
    // The bound is the read timeout (600 ms here) at most.
    expect(performance.now() - startedAt).toBeLessThan(1_000);
    await c.closed;
  });

  it('resolves at once when there is no connection', async () => {
    const t = transport({ connectString: '127.0.0.1:1' });
    const closed = next(t, 'closed');
    await t.close();
    expect(await closed).toBe('closed');
    await t.close();
  });
});
