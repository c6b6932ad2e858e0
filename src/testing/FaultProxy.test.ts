import * as net from 'node:net';
import type { EventEmitter } from 'node:events';
import { InvalidArgumentError } from '../errors';
import { FaultProxy } from './FaultProxy';

const TIMEOUT_MS = 5_000;

/** Resolves with the event's arguments, or rejects if `event` is not emitted within `timeoutMs`. */
function waitFor(emitter: EventEmitter, event: string, timeoutMs = TIMEOUT_MS): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const listener = (...args: unknown[]): void => {
      clearTimeout(timer);
      resolve(args);
    };
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for '${event}'`));
    }, timeoutMs);
    emitter.once(event, listener);
  });
}

/** Polls `predicate` until it holds; rejects after `timeoutMs`. */
async function waitUntil(predicate: () => boolean, what: string, timeoutMs = TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

interface EchoServer {
  server: net.Server;
  port: number;
  /** Everything any connection to this server received, in arrival order. */
  received: string;
  sockets: Set<net.Socket>;
  connections: number;
}

interface Client {
  socket: net.Socket;
  received: string;
  errors: Error[];
  closed: boolean;
}

const echoServers: EchoServer[] = [];
const clients: Client[] = [];
const proxies: FaultProxy[] = [];

async function startEcho(): Promise<EchoServer> {
  const echo: EchoServer = { server: net.createServer(), port: 0, received: '', sockets: new Set(), connections: 0 };
  echo.server.on('error', () => undefined);
  echo.server.on('connection', (socket) => {
    echo.connections++;
    echo.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => echo.sockets.delete(socket));
    socket.on('data', (chunk: Buffer) => {
      echo.received += chunk.toString();
      socket.write(chunk);
    });
  });
  echoServers.push(echo);
  await new Promise<void>((resolve) => echo.server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  echo.port = (echo.server.address() as net.AddressInfo).port;
  return echo;
}

async function startProxy(upstream: string, options?: { delayMs?: number }): Promise<FaultProxy> {
  const proxy = await FaultProxy.start(upstream, options);
  proxies.push(proxy);
  return proxy;
}

function ports(proxy: FaultProxy): number[] {
  return proxy.connectString
    .replace(/\/.*$/, '')
    .split(',')
    .map((hostPort) => Number(hostPort.split(':')[1]));
}

/** Opens a connection without waiting for it (it may be reset at once). */
function openClient(port: number): Client {
  const socket = net.connect({ host: '127.0.0.1', port });
  const client: Client = { socket, received: '', errors: [], closed: false };
  socket.on('data', (chunk: Buffer) => (client.received += chunk.toString()));
  socket.on('error', (err) => client.errors.push(err));
  socket.on('close', () => (client.closed = true));
  clients.push(client);
  return client;
}

async function connectClient(port: number): Promise<Client> {
  const client = openClient(port);
  await waitFor(client.socket, 'connect');
  return client;
}

/** Sends `text` and waits for it to come back, returning the round trip time in ms. */
async function roundTrip(client: Client, text: string): Promise<number> {
  const expected = client.received + text;
  const started = performance.now();
  client.socket.write(text);
  await waitUntil(() => client.received.length >= expected.length, `echo of "${text}"`);
  const elapsed = performance.now() - started;
  expect(client.received).toBe(expected);
  return elapsed;
}

async function waitClosed(client: Client): Promise<void> {
  if (!client.closed) await waitFor(client.socket, 'close');
}

afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
  for (const c of clients.splice(0)) c.socket.destroy();
  await Promise.all(
    echoServers.splice(0).map(
      (echo) =>
        new Promise<void>((resolve) => {
          for (const s of echo.sockets) s.destroy();
          echo.server.close(() => resolve());
        }),
    ),
  );
});

describe('FaultProxy', () => {
  describe('forwarding', () => {
    it('forwards both ways, one listener per upstream server, in upstream order', async () => {
      const a = await startEcho();
      const b = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${a.port},127.0.0.1:${b.port}`);
      expect(proxy.connectString).toMatch(/^127\.0\.0\.1:\d+,127\.0\.0\.1:\d+$/);
      expect(proxy.mode).toBe('healthy');
      const [pa, pb] = ports(proxy);
      expect(new Set([pa, pb, a.port, b.port]).size).toBe(4);

      const ca = await connectClient(pa!);
      const cb = await connectClient(pb!);
      await roundTrip(ca, 'to-a');
      await roundTrip(cb, 'to-b');
      expect(a.received).toBe('to-a');
      expect(b.received).toBe('to-b');
      expect(proxy.connectionCount).toBe(2);
    });

    it('keeps a chroot suffix on connectString and accepts localhost and ::1 upstreams', async () => {
      const proxy = await startProxy('127.0.0.1:2181,localhost:2182,[::1]:2183/app/zk');
      expect(proxy.connectString).toMatch(/^127\.0\.0\.1:\d+,127\.0\.0\.1:\d+,127\.0\.0\.1:\d+\/app\/zk$/);
      const other = await startProxy('127.5.6.7:2181');
      expect(other.connectString).toMatch(/^127\.0\.0\.1:\d+$/);
    });

    it('propagates a clean close from the client to the upstream', async () => {
      const echo = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${echo.port}`);
      const client = await connectClient(ports(proxy)[0]!);
      await roundTrip(client, 'hi');
      expect(echo.sockets.size).toBe(1);
      client.socket.end();
      await waitClosed(client);
      await waitUntil(() => echo.sockets.size === 0, 'the upstream connection closes');
      await waitUntil(() => proxy.connectionCount === 0, 'the proxy forgets the connection');
    });

    it('closes the client socket when the upstream connection fails', async () => {
      // A port with nothing listening on it.
      const probe = net.createServer();
      await new Promise<void>((resolve) => probe.listen({ host: '127.0.0.1', port: 0 }, resolve));
      const deadPort = (probe.address() as net.AddressInfo).port;
      await new Promise<void>((resolve) => probe.close(() => resolve()));

      const proxy = await startProxy(`127.0.0.1:${deadPort}`);
      const client = openClient(ports(proxy)[0]!);
      await waitClosed(client);
      expect(client.received).toBe('');
      await waitUntil(() => proxy.connectionCount === 0, 'the proxy forgets the connection');
    });
  });

  describe('cut', () => {
    it('resets open connections and resets new ones while cut', async () => {
      const echo = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${echo.port}`);
      const port = ports(proxy)[0]!;
      const client = await connectClient(port);
      await roundTrip(client, 'before');

      proxy.cut();
      expect(proxy.mode).toBe('cut');
      expect(proxy.connectionCount).toBe(0);
      await waitClosed(client);
      expect(client.errors.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(['ECONNRESET']);
      await waitUntil(() => echo.sockets.size === 0, 'the upstream side is closed too');

      const late = openClient(port);
      late.socket.write('ignored');
      await waitClosed(late);
      expect(late.received).toBe('');
      expect(echo.received).toBe('before');
      expect(echo.connections).toBe(1);
      expect(proxy.connectionCount).toBe(0);
    });

    it('drops delayed chunks still pending when cut', async () => {
      const echo = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${echo.port}`, { delayMs: 150 });
      const port = ports(proxy)[0]!;
      const client = await connectClient(port);
      client.socket.write('ping');
      // The upstream got 'ping' after the delay and echoed it at once: the echo is now waiting in
      // the proxy's delay queue towards the client.
      await waitUntil(() => echo.received === 'ping', 'the upstream receives the delayed chunk');
      proxy.cut();
      await waitClosed(client);

      // A full delayed round trip on a new connection outlasts the dropped chunk's due time.
      proxy.heal();
      const fresh = await connectClient(port);
      await roundTrip(fresh, 'pong');
      expect(client.received).toBe('');
      expect(echo.received).toBe('pingpong');
    });

    it('heal() restores forwarding for new connections', async () => {
      const echo = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${echo.port}`);
      const port = ports(proxy)[0]!;
      proxy.cut();
      const refused = openClient(port);
      await waitClosed(refused);

      proxy.heal();
      expect(proxy.mode).toBe('healthy');
      const client = await connectClient(port);
      await roundTrip(client, 'back');
      expect(echo.received).toBe('back');
      expect(proxy.connectionCount).toBe(1);
    });
  });

  describe('blackhole', () => {
    it('forwards nothing, drops what it received, and heal() destroys the blackholed connections', async () => {
      const echo = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${echo.port}`);
      const port = ports(proxy)[0]!;
      const old = await connectClient(port);
      await roundTrip(old, 'x');

      proxy.blackhole();
      expect(proxy.mode).toBe('blackhole');
      old.socket.write('A');
      // New connections are accepted (not reset) but go nowhere.
      const during = await connectClient(port);
      during.socket.write('C');
      expect(proxy.connectionCount).toBe(2);
      expect(old.closed).toBe(false);

      proxy.heal();
      await waitClosed(old);
      await waitClosed(during);
      const fresh = await connectClient(port);
      await roundTrip(fresh, 'B');

      expect(echo.received).toBe('xB'); // 'A' and 'C' never reached the upstream
      expect(old.received).toBe('x'); // and nothing came back on the blackholed connections
      expect(during.received).toBe('');
      expect(echo.connections).toBe(2); // the connection accepted while blackholed never went upstream
      expect(proxy.connectionCount).toBe(1);
    });

    it('cut() after blackhole() resets the held connections', async () => {
      const echo = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${echo.port}`);
      const client = await connectClient(ports(proxy)[0]!);
      await roundTrip(client, 'x');
      proxy.blackhole();
      proxy.cut();
      await waitClosed(client);
      expect(proxy.connectionCount).toBe(0);
    });
  });

  describe('delay', () => {
    it('adds at least the delay in each direction', async () => {
      const echo = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${echo.port}`);
      const client = await connectClient(ports(proxy)[0]!);
      await roundTrip(client, 'warm-up');

      const ms = 100;
      proxy.delay(ms);
      const elapsed = await roundTrip(client, 'slow');
      // Lower bound only: a chunk is never delivered before its delay is over (1 ms of slack per
      // hop for the millisecond clock).
      expect(elapsed).toBeGreaterThanOrEqual(2 * ms - 2);

      proxy.delay(0);
      await roundTrip(client, 'fast');
    });

    it('applies delayMs from start()', async () => {
      const echo = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${echo.port}`, { delayMs: 60 });
      const client = await connectClient(ports(proxy)[0]!);
      expect(await roundTrip(client, 'slow')).toBeGreaterThanOrEqual(2 * 60 - 2);
    });

    it('preserves order over many chunks while the delay changes', async () => {
      const echo = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${echo.port}`);
      const client = await connectClient(ports(proxy)[0]!);
      const delays = [30, 0, 5, 0, 20, 1, 0];
      let expected = '';
      for (let i = 0; i < 200; i++) {
        if (i % 10 === 0) proxy.delay(delays[(i / 10) % delays.length]!);
        const message = `<${i}>`;
        expected += message;
        client.socket.write(message);
        // Let the chunk leave as its own segment so the proxy sees many chunks.
        await new Promise((resolve) => setImmediate(resolve));
      }
      await waitUntil(() => client.received.length >= expected.length, 'every chunk comes back');
      expect(client.received).toBe(expected);
      expect(echo.received).toBe(expected);
    });
  });

  describe('intercept', () => {
    it('rewrites and drops chunks in either direction, and stops when removed', async () => {
      const echo = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${echo.port}`);
      const client = await connectClient(ports(proxy)[0]!);
      const seen: string[] = [];
      const remove = proxy.intercept((chunk, { direction }) => {
        seen.push(direction);
        const text = chunk.toString();
        if (direction === 'client->upstream' && text === 'drop-me') return 'drop';
        if (direction === 'upstream->client') return Buffer.from(text.toUpperCase());
        return 'forward';
      });
      client.socket.write('drop-me');
      // Sent apart, so that the two are separate chunks. The dropped one never reaches the server;
      // the next one does, and comes back rewritten.
      await waitUntil(() => seen.length === 1, 'the proxy receives the first chunk');
      client.socket.write('hello');
      await waitUntil(() => client.received === 'HELLO', 'the rewritten echo');
      expect(echo.received).toBe('hello');
      expect(seen).toEqual(['client->upstream', 'client->upstream', 'upstream->client']);
      remove();
      await roundTrip(client, 'plain');
    });

    it('resets the connection on a reply, after the server has received the request', async () => {
      const echo = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${echo.port}`);
      const client = await connectClient(ports(proxy)[0]!);
      let connection = 0;
      proxy.intercept((_chunk, info) => {
        connection = info.connection;
        return info.direction === 'upstream->client' ? 'reset' : 'forward';
      });
      client.socket.write('request');
      await waitClosed(client);
      expect(echo.received).toBe('request');
      expect(client.received).toBe('');
      expect(client.errors.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(['ECONNRESET']);
      expect(connection).toBeGreaterThan(0);
      expect(proxy.connectionCount).toBe(0);
    });

    it('forwards the bytes it is given, then ends the connection both ways, and delivers nothing after them', async () => {
      const echo = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${echo.port}`);
      const client = await connectClient(ports(proxy)[0]!);
      proxy.intercept((chunk, { direction }) => (direction === 'upstream->client' ? { forward: chunk.subarray(0, 3), then: 'end' } : 'forward'));
      client.socket.write('hello');
      await waitClosed(client);
      expect(client.received).toBe('hel');
      expect(client.errors).toEqual([]);
      expect(echo.received).toBe('hello');
      await waitUntil(() => proxy.connectionCount === 0, 'the connection closed at the proxy');
    });

    it('forwards a chunk when an interceptor throws, and refuses a non-function', async () => {
      const echo = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${echo.port}`);
      const client = await connectClient(ports(proxy)[0]!);
      proxy.intercept(() => {
        throw new Error('interceptor bug');
      });
      await roundTrip(client, 'still');
      expect(() => proxy.intercept('nope' as never)).toThrow(InvalidArgumentError);
    });
  });

  describe('close', () => {
    it('is idempotent, closes every connection and releases the ports', async () => {
      const a = await startEcho();
      const b = await startEcho();
      const proxy = await startProxy(`127.0.0.1:${a.port},127.0.0.1:${b.port}`);
      const [pa, pb] = ports(proxy);
      const client = await connectClient(pa!);
      await roundTrip(client, 'x');

      await Promise.all([proxy.close(), proxy.close()]);
      await proxy.close();
      expect(proxy.connectionCount).toBe(0);
      await waitClosed(client);

      for (const port of [pa!, pb!]) {
        const refused = openClient(port);
        await waitClosed(refused);
        expect(refused.errors.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(['ECONNREFUSED']);
        // The port can be bound again.
        const rebind = net.createServer();
        await new Promise<void>((resolve, reject) => {
          rebind.once('error', reject);
          rebind.listen({ host: '127.0.0.1', port }, resolve);
        });
        await new Promise<void>((resolve) => rebind.close(() => resolve()));
      }
    });

    it('is what await using calls', async () => {
      const echo = await startEcho();
      let port: number;
      let client: Client;
      {
        await using proxy = await FaultProxy.start(`127.0.0.1:${echo.port}`);
        port = ports(proxy)[0]!;
        client = await connectClient(port);
        await roundTrip(client, 'x');
      }
      await waitClosed(client);
      const refused = openClient(port);
      await waitClosed(refused);
      expect(refused.errors.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(['ECONNREFUSED']);
    });
  });

  describe('input validation', () => {
    it.each([
      [''],
      ['   '],
      ['127.0.0.1'],
      ['127.0.0.1:'],
      [':2181'],
      ['127.0.0.1:0'],
      ['127.0.0.1:65536'],
      ['127.0.0.1:21.5'],
      ['127.0.0.1:abc'],
      ['127.0.0.1:-1'],
      ['127.0.0.1:2181,,127.0.0.1:2182'],
      ['127.0.0.1:2181,'],
      ['127.0.0.1:2181/'],
      ['10.0.0.1:2181'],
      ['128.0.0.1:2181'],
      ['127.0.0.256:2181'],
      ['0.0.0.0:2181'],
      ['example.com:2181'],
      ['[::2]:2181'],
      ['127.0.0.1:2181,192.168.1.1:2181'],
    ])('rejects upstream %j', async (upstream) => {
      await expect(FaultProxy.start(upstream)).rejects.toBeInstanceOf(InvalidArgumentError);
    });

    it('rejects a non-string upstream', async () => {
      await expect(FaultProxy.start(undefined as unknown as string)).rejects.toBeInstanceOf(InvalidArgumentError);
    });

    it.each([[-1], [NaN], [Infinity], ['5']])('rejects delay %p', async (ms) => {
      await expect(FaultProxy.start('127.0.0.1:2181', { delayMs: ms as number })).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
      const proxy = await startProxy('127.0.0.1:2181');
      expect(() => proxy.delay(ms as number)).toThrow(InvalidArgumentError);
    });
  });
});
