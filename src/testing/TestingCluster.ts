import { InvalidArgumentError } from '../errors';
import { PeerLinks, type PeerLink } from './peerLinks';
import { freePorts } from './ports';
import { TestingServer, type TestingServerOptions } from './TestingServer';
import { runZooKeeperCli } from './zooKeeperCli';

/** Options of {@link TestingCluster.start}: those of every member, and how the members are linked. */
export interface TestingClusterOptions extends Omit<TestingServerOptions, 'port' | 'dataDir'> {
  /**
   * Run the quorum and election traffic between members through FaultProxies, one per ordered
   * pair, so that {@link TestingCluster.link} can cut, blackhole, slow down and heal the link
   * between two members. Off by default: members then talk directly.
   */
  proxiedLinks?: boolean;
  /**
   * Dynamic reconfiguration on (`reconfigEnabled`), so that {@link TestingCluster.addMember} and
   * {@link TestingCluster.removeMember} can change the membership while the ensemble serves. Off by
   * default; not with `proxiedLinks`.
   */
  reconfigEnabled?: boolean;
}

/** How a member is cut off from its peers: connections reset, or silently nothing forwarded. */
export type IsolationMode = 'cut' | 'blackhole';

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
 *
 * With `proxiedLinks`, the members talk to each other through FaultProxies, and a test can
 * partition the ensemble itself while clients still reach every member:
 *
 * ```ts
 * await using cluster = await TestingCluster.start(3, { proxiedLinks: true });
 * const leader = await cluster.waitForLeader();
 * cluster.isolate(leader.serverId); // the two others elect a new leader
 * cluster.healLinks(); // the old leader rejoins as a follower
 * ```
 */
export class TestingCluster implements AsyncDisposable {
  private closed = false;
  /** Every member started, removed ones included until closed; see {@link members}. */
  private readonly started: TestingServer[];

  private constructor(
    members: readonly TestingServer[],
    private readonly links: PeerLinks | undefined,
    /** The `server.N=` line of each member in the configuration, by server id; with reconfiguration only. */
    private readonly lines: Map<number, string> | undefined,
    private readonly serverOptions: Omit<TestingServerOptions, 'port' | 'dataDir'>,
  ) {
    this.started = [...members];
  }

  /** The members of the configuration (all of them, without reconfiguration), in server id order. */
  get members(): readonly TestingServer[] {
    const lines = this.lines;
    return lines === undefined ? this.started : this.started.filter((m) => lines.has(m.serverId));
  }

  /**
   * Starts an `n`-member ensemble and resolves once every member serves as leader or follower.
   *
   * @throws InvalidArgumentError when `n` is not an integer from 1 to 9 (before anything starts).
   */
  static async start(n = 3, options: TestingClusterOptions = {}): Promise<TestingCluster> {
    if (!Number.isInteger(n) || n < 1 || n > 9) throw new InvalidArgumentError(`an ensemble has 1 to 9 members, got ${n}`);
    const { proxiedLinks, reconfigEnabled, ...serverOptions } = options;
    if (proxiedLinks === true && reconfigEnabled === true) throw new InvalidArgumentError('an ensemble has proxiedLinks or reconfigEnabled, not both');
    const reconfig = reconfigEnabled === true;
    const ports = await freePorts(3 * n);
    const real = Array.from({ length: n }, (_, i) => ({ quorumPort: ports[3 * i + 1], electionPort: ports[3 * i + 2] }));
    const links = proxiedLinks === true ? await PeerLinks.start(real) : undefined;
    const direct = real.map((_, i) => serverLine(i + 1, ports.slice(3 * i, 3 * i + 3), reconfig));
    const members = Array.from(
      { length: n },
      (_, i) => new TestingServer({ ...serverOptions, port: ports[3 * i] }, { serverId: i + 1, serverLines: links ? links.serverLines(i + 1) : direct, reconfig }),
    );
    const lines = reconfig ? new Map(direct.map((line, i) => [i + 1, line])) : undefined;
    const cluster = new TestingCluster(members, links, lines, serverOptions);
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

  /**
   * The link between members `a` and `b` (server ids), both ways: quorum and election traffic.
   *
   * @throws InvalidArgumentError when the ensemble was started without `proxiedLinks`, or `a` and
   *   `b` are not two different members.
   */
  link(a: number, b: number): PeerLink {
    if (this.links === undefined) throw new InvalidArgumentError('the links between members are direct: start the ensemble with proxiedLinks');
    return this.links.link(a, b);
  }

  /**
   * Cuts member `serverId` off from every other member (its clients still reach it), until
   * {@link healLinks}. In a 3-member ensemble, the two others keep a quorum.
   *
   * @throws InvalidArgumentError as {@link link} does.
   */
  isolate(serverId: number, how: IsolationMode = 'cut'): void {
    for (const other of this.members) {
      if (other.serverId !== serverId) this.link(serverId, other.serverId)[how]();
    }
  }

  /** Heals every link between members (no fault, no delay). Does nothing without `proxiedLinks`. */
  healLinks(): void {
    for (const link of this.links?.all() ?? []) link.heal();
  }

  /**
   * Starts a new member and adds it to the configuration (`reconfig -add`, as an operator would:
   * the joiner starts with the current membership and itself, then the ensemble takes it in).
   * Resolves once the configuration holds it.
   *
   * @throws InvalidArgumentError when the ensemble was started without `reconfigEnabled`.
   */
  async addMember(): Promise<TestingServer> {
    const lines = this.reconfigurable();
    const serverId = Math.max(...this.started.map((m) => m.serverId)) + 1;
    const ports = await freePorts(3);
    const line = serverLine(serverId, ports, true);
    const joiner = new TestingServer({ ...this.serverOptions, port: ports[0] }, { serverId, serverLines: [...lines.values(), line], reconfig: true });
    this.started.push(joiner);
    await joiner.start();
    await this.reconfig(['-add', line]);
    lines.set(serverId, line);
    return joiner;
  }

  /**
   * Takes member `serverId` out of the configuration (`reconfig -remove`). Its process keeps
   * running, as after an operator's reconfig; stop it to take it away from its clients too.
   *
   * @throws InvalidArgumentError when the ensemble was started without `reconfigEnabled`, or
   *   `serverId` is not a member.
   */
  async removeMember(serverId: number): Promise<TestingServer> {
    const lines = this.reconfigurable();
    const member = this.members.find((m) => m.serverId === serverId);
    if (member === undefined) throw new InvalidArgumentError(`server ${serverId} is not a member`);
    const via = this.members.find((m) => m !== member && m.isRunning) ?? member;
    await this.reconfig(['-remove', String(serverId)], via);
    lines.delete(serverId);
    return member;
  }

  private reconfigurable(): Map<number, string> {
    if (this.lines === undefined) throw new InvalidArgumentError('the ensemble was started without reconfigEnabled');
    return this.lines;
  }

  /** Runs ZooKeeper's own CLI `reconfig` against a serving member, and checks that it took. */
  private async reconfig(args: readonly string[], via?: TestingServer): Promise<void> {
    const target = via ?? this.members.find((m) => m.isRunning);
    if (target === undefined) throw new Error('no member runs to reconfigure the ensemble through');
    const out = await runZooKeeperCli(['-server', target.connectString, 'reconfig', ...args]);
    if (!/Committed new configuration/i.test(out)) throw new Error(`reconfig ${args.join(' ')} failed:\n${out.slice(-2000)}`);
  }

  /** Kills every member and removes all data. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.started.map((m) => m.close()));
    await this.links?.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** A member's `server.N=` line: quorum and election ports, and with reconfiguration its role and client address. */
function serverLine(serverId: number, [clientPort, quorumPort, electionPort]: readonly number[], reconfig: boolean): string {
  const peer = `server.${serverId}=127.0.0.1:${quorumPort}:${electionPort}`;
  return reconfig ? `${peer}:participant;127.0.0.1:${clientPort}` : peer;
}
