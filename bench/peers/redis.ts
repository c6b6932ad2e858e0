/**
 * The outside reference: redis-semaphore's Mutex (SET NX PX to acquire, retried every
 * `retryInterval` while taken; a Lua compare-and-delete to release) over node-redis, against a
 * redis-server started here on a free loopback port with persistence off. One node-redis
 * connection per "session", all in this process.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from 'redis';
import { Mutex } from 'redis-semaphore';
import { freePorts } from '../../src/testing';
import { HoldCounter, clockUs } from './clock';
import { spawnDaemon } from './spawn';
import type { ContendedRun, LockPeer } from './types';

export const REDIS_HINT = 'install it with `apt-get update && apt-get install -y redis-server`';
export const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

/** redis-semaphore's options here: its defaults, but no acquire timeout within a run. */
export const REDIS_MUTEX_OPTIONS = Object.freeze({ lockTimeout: 10_000, acquireTimeout: 600_000, retryInterval: 10 });

/** What is used of a node-redis client. */
interface NodeRedis {
  sendCommand(args: ReadonlyArray<string | Buffer>): Promise<unknown>;
  connect(): Promise<unknown>;
  close(): Promise<void>;
  readonly isOpen: boolean;
}

/** redis-semaphore calls ioredis' variadic methods; node-redis takes the same commands as argument arrays. */
function ioredisFacade(client: NodeRedis) {
  const send = (args: Array<string | number | Buffer>) => client.sendCommand(args.map((a) => (typeof a === 'number' ? String(a) : a)));
  return {
    eval: (script: string, numKeys: number, ...args: Array<string | number>) => send(['EVAL', script, numKeys, ...args]),
    evalsha: (sha: string, numKeys: number, ...args: Array<string | number>) => send(['EVALSHA', sha, numKeys, ...args]),
    get: (key: string) => send(['GET', key]),
    set: (...args: Array<string | number>) => send(['SET', ...args]),
    zrem: (key: string, ...members: Array<string | number>) => send(['ZREM', key, ...members]),
  };
}

function packageVersion(name: string): string {
  try {
    const file = join(__dirname, '..', '..', 'node_modules', name, 'package.json');
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** Why the Redis reference cannot run here, or undefined when it can. */
export function redisMissing(): string | undefined {
  if (!existsSync(REDIS_SERVER)) return `${REDIS_SERVER} is missing: ${REDIS_HINT}`;
  return undefined;
}

export class RedisPeer implements LockPeer {
  readonly id = 'redis' as const;
  readonly usesZooKeeper = false;
  readonly label: string;
  private clients: NodeRedis[] = [];

  private constructor(
    private readonly server: ChildProcess,
    private readonly port: number,
    readonly versions: Record<string, string>,
  ) {
    this.label = `redis-semaphore ${versions['redis-semaphore']}`;
  }

  static async start(): Promise<RedisPeer> {
    const missing = redisMissing();
    if (missing) throw new Error(missing);
    const version = spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' }).stdout.match(/v=(\S+)/)?.[1] ?? 'unknown';
    const [port] = await freePorts(1);
    const server = spawnDaemon(
      REDIS_SERVER,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning'],
      'redis-bench',
    );
    let stderr = '';
    server.stderr?.setEncoding('utf8');
    server.stderr?.on('data', (c: string) => (stderr = (stderr + c).slice(-4000)));
    const peer = new RedisPeer(server, port, {
      'redis-server': version,
      'redis-semaphore': packageVersion('redis-semaphore'),
      'node-redis': packageVersion('redis'),
    });
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        await peer.open(1);
        await peer.closeSessions();
        return peer;
      } catch (err) {
        if (Date.now() > deadline || server.exitCode !== null) {
          await peer.shutdown();
          throw new Error(`redis-server did not start on port ${port}: ${String(err)}\n${stderr}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  async open(sessions: number): Promise<void> {
    await this.closeSessions();
    for (let i = 0; i < sessions; i++) {
      const client = createClient({ socket: { host: '127.0.0.1', port: this.port, reconnectStrategy: false } });
      client.on('error', () => undefined);
      this.clients.push(client as NodeRedis);
    }
    await Promise.all(this.clients.map((c) => c.connect()));
  }

  async closeSessions(): Promise<void> {
    const clients = this.clients;
    this.clients = [];
    await Promise.all(clients.map((c) => (c.isOpen ? c.close() : undefined)));
  }

  private mutex(i: number, key: string): Mutex {
    if (this.clients.length === 0) throw new Error('no sessions are open');
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- an ioredis-shaped facade
    return new Mutex(ioredisFacade(this.clients[i % this.clients.length]) as any, key, REDIS_MUTEX_OPTIONS);
  }

  async uncontended(path: string, iterations: number): Promise<number[]> {
    const mutex = this.mutex(0, path);
    const lat: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = clockUs();
      await mutex.acquire();
      await mutex.release();
      lat.push(clockUs() - t0);
    }
    return lat;
  }

  async contended(path: string, durationMs: number): Promise<ContendedRun> {
    const n = this.clients.length;
    const counter = new HoldCounter();
    const counts = new Array<number>(n).fill(0);
    const holds: Array<[number, number]> = [];
    const t0 = clockUs();
    const deadline = t0 + durationMs * 1000;
    await Promise.all(
      Array.from({ length: n }, async (_, k) => {
        const mutex = this.mutex(k, path);
        while (clockUs() < deadline) {
          await mutex.acquire();
          counter.enter();
          const start = clockUs();
          const end = clockUs();
          counter.leave();
          await mutex.release();
          holds.push([start, end]);
          counts[k]++;
        }
      }),
    );
    return { counts, elapsedMs: (clockUs() - t0) / 1000, violations: counter.violations, holds };
  }

  async shutdown(): Promise<void> {
    await this.closeSessions().catch(() => undefined);
    if (this.server.exitCode === null) {
      const exited = new Promise<void>((resolve) => this.server.once('close', () => resolve()));
      this.server.stdin?.end();
      await exited;
    }
  }
}
