/**
 * A probe of the native binding's descriptor handling: does a ZooKeeper handle's reconnect take the
 * readiness of another socket of the same process?
 *
 * The process talks to a ZooKeeper server with one client (the transport given) and, beside it,
 * to an HTTP server of its own, with a new connection per request (4 flows, each request given
 * 8 s). Every few seconds it blocks its event loop for longer than the client's receive timeout
 * (two thirds of the 4 s session timeout), as a long GC pause or a frozen process does: the C
 * client then finds its connection timed out, closes its socket and opens another. A request
 * whose reply does not come within its 8 s is counted as deaf, with what the kernel says of its
 * socket (state, bytes received and never read) and whether its descriptor number had been the
 * ZooKeeper client's.
 *
 *   node -r ts-node/register/transpile-only chaos/socketProbe.ts native 120
 *   node -r ts-node/register/transpile-only chaos/socketProbe.ts protocol 120
 *
 * It prints one JSON line. The README's "The native binding and the other sockets of a process"
 * (chaos/README.md) gives its figures.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import * as http from 'node:http';
import { ZkClient } from '../src';
import type { TransportName } from '../src/client/chooseTransport';
import { TestingServer } from '../src/testing';

const SESSION_TIMEOUT_MS = 4_000;
const REQUEST_LIMIT_MS = 8_000;

interface TcpSocket {
  readonly remotePort: number;
  readonly state: string;
  readonly unread: number;
}

const TCP_STATES: Record<string, string> = { '01': 'ESTABLISHED', '06': 'TIME_WAIT', '07': 'CLOSE', '08': 'CLOSE_WAIT', '0A': 'LISTEN' };

/** This process's TCP sockets by inode, from /proc/net/tcp. */
function tcpByInode(): Map<string, TcpSocket> {
  const sockets = new Map<string, TcpSocket>();
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const remotePort = parseInt(f[2]!.split(':')[1]!, 16);
    const unread = parseInt(f[4]!.split(':')[1]!, 16);
    sockets.set(f[9]!, { remotePort, state: TCP_STATES[f[3]!] ?? f[3]!, unread });
  }
  return sockets;
}

/** The socket inode behind one of this process's descriptors; undefined when it is no socket, or closed meanwhile. */
function inodeOf(fd: number | string): string | undefined {
  try {
    return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1];
  } catch {
    return undefined;
  }
}

/** The descriptors of this process that are TCP sockets to `port`. */
function descriptorsTo(port: number): number[] {
  const tcp = tcpByInode();
  return readdirSync('/proc/self/fd')
    .filter((fd) => {
      const inode = inodeOf(fd);
      return inode !== undefined && tcp.get(inode)?.remotePort === port;
    })
    .map(Number);
}

function socketOf(fd: number): TcpSocket | undefined {
  const inode = inodeOf(fd);
  return inode === undefined ? undefined : tcpByInode().get(inode);
}

async function main(): Promise<void> {
  const transport = (process.argv[2] ?? 'native') as TransportName;
  const seconds = Number(process.argv[3] ?? 120);
  const server = await TestingServer.start();
  const zkPort = Number(server.connectString.split(':').pop());
  const client = new ZkClient({ connectString: server.connectString, transport, sessionTimeoutMs: SESSION_TIMEOUT_MS });
  client.start();
  await client.blockUntilConnected({ timeoutMs: 30_000 });

  const web = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  const webPort = (web.address() as { port: number }).port;

  // Every descriptor number the ZooKeeper client has used, read before each stall (the client's
  // socket changes only at a reconnect, which a stall brings; reading /proc more often slows the
  // flows down).
  const zkDescriptors = new Set<number>();
  const sample = () => descriptorsTo(zkPort).forEach((fd) => zkDescriptors.add(fd));

  const agent = new http.Agent({ keepAlive: false });
  const deaf: Array<{ fd: number | undefined; wasZooKeepers: boolean; socket: TcpSocket | undefined }> = [];
  let requests = 0;
  let answered = 0;
  let failed = 0;
  const request = () =>
    new Promise<void>((resolve) => {
      requests++;
      let deafened = false;
      const req = http.request({ host: '127.0.0.1', port: webPort, method: 'POST', path: '/', agent }, (res) => {
        res.resume();
        res.on('end', () => {
          answered++;
          clearTimeout(limit);
          resolve();
        });
      });
      const limit = setTimeout(() => {
        const fd = (req.socket as unknown as { _handle?: { fd?: number } } | null)?._handle?.fd;
        deafened = true;
        deaf.push({ fd, wasZooKeepers: fd !== undefined && zkDescriptors.has(fd), socket: fd === undefined ? undefined : socketOf(fd) });
        req.destroy();
        resolve();
      }, REQUEST_LIMIT_MS);
      req.on('error', () => {
        // A deaf request's own destroy() lands here too: it is counted once, as deaf.
        if (!deafened) failed++;
        clearTimeout(limit);
        resolve();
      });
      req.end('x');
    });

  const until = Date.now() + seconds * 1_000;
  const flows = Array.from({ length: 4 }, async () => {
    while (Date.now() < until) await request();
  });
  let stalls = 0;
  const stalling = (async () => {
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      sample();
      // Longer than the receive timeout (2/3 of the session timeout), shorter than 1.5 of it.
      const end = Date.now() + SESSION_TIMEOUT_MS * (1.1 + Math.random() * 0.4);
      while (Date.now() < end);
      stalls++;
    }
  })();
  await Promise.all([...flows, stalling]);
  process.stdout.write(`${JSON.stringify({ transport, seconds, stalls, requests, answered, failed, deaf })}\n`);
  await client.close();
  web.close();
  await server.close();
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
