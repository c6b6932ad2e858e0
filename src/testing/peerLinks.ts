/**
 * The links between the members of a TestingCluster, each through FaultProxies, so that a test can
 * cut, blackhole, slow down and heal the quorum and election traffic between two members while
 * clients still reach both.
 *
 * Every member reaches each peer at the addresses its own config gives for that peer. Each member
 * gets a config in which a peer's quorum and election addresses are those of a proxy it alone uses:
 * one proxy per ordered pair (from, to), forwarding to the peer's real ports. A follower reaches
 * the leader's quorum port through its own proxy; election connections go both ways through the
 * proxy of the connecting side.
 *
 * One catch: when a member connects to a peer of higher id for the election, the peer drops that
 * connection and connects back, to the address the member announced in its first message, which
 * is the member's real election address. That connection would bypass every proxy and survive a
 * cut. So the proxy (from, to) rewrites the announced address, on its way to the peer, to the
 * election address of the proxy (to, from): the peer connects back through its own proxy.
 */
import debug from 'debug';
import { InvalidArgumentError } from '../errors';
import { FaultProxy, type ChunkInterceptor } from './FaultProxy';

const log = debug('zk-recipes:testing:links');

/** A member's real quorum and election ports. */
export interface PeerPorts {
  readonly quorumPort: number;
  readonly electionPort: number;
}

/** The two proxies of one ordered pair's traffic: to the peer's quorum port, and to its election port. */
interface Directed {
  readonly proxy: FaultProxy;
  readonly quorumPort: number;
  readonly electionPort: number;
}

/** The first-message versions of ZooKeeper's election protocol that carry an address (3.5 to 3.8). */
const ANNOUNCING_VERSIONS = new Set([-65536n, -65535n]);

/**
 * Rewrites the address a member announces in its first election message: `from` becomes `to`.
 * The message: version (int64, negative), server id (int64), length (int32), address (UTF-8,
 * "host:port", several joined by '|'). Only the first chunk of a connection can hold it; any other
 * chunk passes unchanged.
 */
export function rewriteAnnouncedAddress(chunk: Buffer, from: string, to: string): Buffer {
  if (chunk.length < 20) return chunk;
  if (!ANNOUNCING_VERSIONS.has(chunk.readBigInt64BE(0))) return chunk;
  const length = chunk.readInt32BE(16);
  if (length < 0 || 20 + length > chunk.length) return chunk;
  const announced = chunk.subarray(20, 20 + length).toString('utf8');
  const rewritten = announced
    .split('|')
    .map((a) => (a === from ? to : a))
    .join('|');
  if (rewritten === announced) return chunk;
  const address = Buffer.from(rewritten, 'utf8');
  const head = Buffer.alloc(20);
  chunk.copy(head, 0, 0, 16);
  head.writeInt32BE(address.length, 16);
  return Buffer.concat([head, address, chunk.subarray(20 + length)]);
}

/**
 * The link between two members, both ways. Every call acts on the traffic of both directions:
 * quorum (follower to leader) and election.
 */
export class PeerLink {
  /** @internal */
  constructor(
    /** The lower server id of the two. */
    readonly a: number,
    /** The higher server id of the two. */
    readonly b: number,
    private readonly proxies: readonly FaultProxy[],
  ) {}

  /** Resets every connection between the two, and every new one, until {@link heal}. */
  cut(): void {
    log('link %d-%d: cut', this.a, this.b);
    for (const p of this.proxies) p.cut();
  }

  /** Forwards nothing between the two (connections stay open) until {@link heal}. */
  blackhole(): void {
    log('link %d-%d: blackhole', this.a, this.b);
    for (const p of this.proxies) p.blackhole();
  }

  /** Adds `ms` of latency to every chunk between the two, both ways; `delay(0)` removes it. */
  delay(ms: number): void {
    log('link %d-%d: delay %d ms', this.a, this.b, ms);
    for (const p of this.proxies) p.delay(ms);
  }

  /** Forwards again (connections that went through a blackhole are reset), with no delay. */
  heal(): void {
    log('link %d-%d: heal', this.a, this.b);
    for (const p of this.proxies) {
      p.heal();
      p.delay(0);
    }
  }
}

/**
 * The proxies of an n-member ensemble's links, and each member's `server.N` lines pointing through
 * them. Members are numbered from 1, as server ids are.
 */
export class PeerLinks {
  private constructor(
    private readonly directed: ReadonlyMap<string, Directed>,
    private readonly n: number,
    private readonly real: readonly PeerPorts[],
  ) {}

  /** Starts one proxy per ordered pair of members, forwarding to the peer's real quorum and election ports. */
  static async start(real: readonly PeerPorts[]): Promise<PeerLinks> {
    const directed = new Map<string, Directed>();
    const links = new PeerLinks(directed, real.length, real);
    try {
      for (let from = 1; from <= real.length; from++) {
        for (let to = 1; to <= real.length; to++) {
          if (from === to) continue;
          const peer = real[to - 1];
          const proxy = await FaultProxy.start(`127.0.0.1:${peer.quorumPort},127.0.0.1:${peer.electionPort}`);
          const [quorumPort, electionPort] = proxy.connectString.split(',').map((hp) => Number(hp.split(':')[1]));
          directed.set(`${from}>${to}`, { proxy, quorumPort, electionPort });
        }
      }
      for (let from = 1; from <= real.length; from++) {
        for (let to = 1; to <= real.length; to++) {
          if (from !== to) links.announceThroughProxy(from, to);
        }
      }
    } catch (err) {
      await links.close();
      throw err;
    }
    return links;
  }

  private get(from: number, to: number): Directed {
    const d = this.directed.get(`${from}>${to}`);
    if (d === undefined) throw new InvalidArgumentError(`no link from member ${from} to member ${to} in a ${this.n}-member ensemble`);
    return d;
  }

  /** See the module comment: the peer connects back through its own proxy, not to the real address. */
  private announceThroughProxy(from: number, to: number): void {
    const own = `127.0.0.1:${this.real[from - 1].electionPort}`;
    const back = `127.0.0.1:${this.get(to, from).electionPort}`;
    const seen = new Set<number>();
    const rewrite: ChunkInterceptor = (chunk, { connection, direction }) => {
      if (direction !== 'client->upstream' || seen.has(connection)) return 'forward';
      seen.add(connection);
      return rewriteAnnouncedAddress(chunk, own, back);
    };
    this.get(from, to).proxy.intercept(rewrite);
  }

  /** The `server.N` lines of member `member`'s config: its own real ports, its peers' through its proxies. */
  serverLines(member: number): string[] {
    return Array.from({ length: this.n }, (_, i) => {
      const id = i + 1;
      if (id === member) return `server.${id}=127.0.0.1:${this.real[i].quorumPort}:${this.real[i].electionPort}`;
      const d = this.get(member, id);
      return `server.${id}=127.0.0.1:${d.quorumPort}:${d.electionPort}`;
    });
  }

  /** The link between members `a` and `b` (server ids), both ways. */
  link(a: number, b: number): PeerLink {
    if (!Number.isInteger(a) || !Number.isInteger(b) || a === b) throw new InvalidArgumentError(`a link joins two different members, got ${a} and ${b}`);
    const [lo, hi] = a < b ? [a, b] : [b, a];
    return new PeerLink(lo, hi, [this.get(lo, hi).proxy, this.get(hi, lo).proxy]);
  }

  /** Every link of the ensemble. */
  all(): PeerLink[] {
    const out: PeerLink[] = [];
    for (let a = 1; a <= this.n; a++) for (let b = a + 1; b <= this.n; b++) out.push(this.link(a, b));
    return out;
  }

  /** Closes every proxy. Idempotent. */
  async close(): Promise<void> {
    await Promise.all([...this.directed.values()].map((d) => d.proxy.close()));
  }
}
