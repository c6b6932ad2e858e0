import { InvalidArgumentError } from '../errors';
import { freePorts } from './ports';
import { TestingServer, type TestingServerOptions } from './TestingServer';

/**
 * An ensemble of real ZooKeeper servers on loopback, each a `TestingServer` with the same controls
 * (stop, restart, kill, pause, resume). It can tell which member leads, from `srvr`.
 *
 * @example
 * ```ts
 * await using cluster = await TestingCluster.start(3);
 * const leader = await cluster.waitForLeader();
 * await leader.kill();
 * ```
 */
export class TestingCluster implements AsyncDisposable {
  private closed = false;

  private constructor(readonly members: readonly TestingServer[]) {}

  /** Starts an `n`-member ensemble and resolves once every member serves as leader or follower. */
  static async start(n = 3, options: Omit<TestingServerOptions, 'port' | 'dataDir'> = {}): Promise<TestingCluster> {
    if (!Number.isInteger(n) || n < 1 || n > 9) throw new InvalidArgumentError(`an ensemble has 1 to 9 members, got ${n}`);
    const ports = await freePorts(3 * n);
    const serverLines = Array.from({ length: n }, (_, i) => `server.${i + 1}=127.0.0.1:${ports[3 * i + 1]}:${ports[3 * i + 2]}`);
    const members = Array.from(
      { length: n },
      (_, i) => new TestingServer({ ...options, port: ports[3 * i] }, { serverId: i + 1, serverLines }),
    );
    const cluster = new TestingCluster(members);
    try {
      await Promise.all(members.map((m) => m.start()));
    } catch (err) {
      await cluster.close();
      throw err;
    }
    return cluster;
  }

  /** Every member's address, comma-separated. */
  get connectString(): string {
    return this.members.map((m) => m.connectString).join(',');
  }

  /** The member that leads now, by `srvr`; undefined while there is none. */
  async leader(): Promise<TestingServer | undefined> {
    const modes = await Promise.all(this.members.map((m) => m.mode()));
    const i = modes.indexOf('leader');
    return i < 0 ? undefined : this.members[i];
  }

  /** The members that follow now, by `srvr`. */
  async followers(): Promise<TestingServer[]> {
    const modes = await Promise.all(this.members.map((m) => m.mode()));
    return this.members.filter((_, i) => modes[i] === 'follower');
  }

  /** Waits until a member leads and a quorum serves, then returns the leader. */
  async waitForLeader(timeoutMs = 60_000): Promise<TestingServer> {
    const deadline = Date.now() + timeoutMs;
    const quorum = Math.floor(this.members.length / 2) + 1;
    while (Date.now() < deadline) {
      const modes = await Promise.all(this.members.map((m) => m.mode()));
      const serving = modes.filter((m) => m === 'leader' || m === 'follower').length;
      const i = modes.indexOf('leader');
      if (i >= 0 && serving >= quorum) return this.members[i];
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no leader with a serving quorum within ${timeoutMs} ms`);
  }

  /** Kills every member and removes all data. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.members.map((m) => m.close()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
