/**
 * What the ZooKeeper server says it did. Packets: `srvr`'s "Received" + "Sent" (the server's
 * zk_packets_received + zk_packets_sent: every request, response and watch notification of every
 * client). Bytes: `mntr`'s zk_bytes_received_count + zk_response_bytes. Watches: `mntr`'s
 * zk_watch_count. (`srvr` is read for packets because a reading of it always costs the same two
 * packets, whereas `mntr`'s long answer costs more packets as its figures grow.)
 *
 * On an ensemble every member is read and the figures are summed: a member counts the packets,
 * bytes and watches of the clients connected to it, and none of the quorum's traffic between
 * members, so the sum is what the clients exchanged with the ensemble, comparable with a
 * standalone server's figure. The packets are kept per member too, to show where the sessions
 * went.
 *
 * A measurement reads the counters right before and right after the measured work, with no other
 * client talking to the server (every other library's sessions are closed; idle sessions of the
 * library under test send at most a ping every 10 s with the 30 s session timeout used
 * throughout), and subtracts what the readings themselves add, calibrated at start by measuring
 * nothing.
 */
import { fourLetterWord, parseMntr, parseMode } from '../src/testing';

export interface Counters {
  packets: number;
  bytes: number;
}

export interface Measured<T> {
  value: T;
  /** Server packets during the work, the readings' own removed; summed over the members. */
  packets: number;
  /** The same per member, in the probe's member order. */
  packetsByMember: number[];
  bytes: number;
  wallMs: number;
}

/** One server the probe reads: its client address, and its role at its last `srvr` reading. */
export interface ProbedMember {
  readonly host: string;
  readonly port: number;
  /** 'standalone', 'leader' or 'follower' as `srvr` last said; undefined before the first reading. */
  mode: string | undefined;
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

export class ServerProbe {
  /** What the readings of one measurement add to each member's counters. */
  private overhead: Counters[];
  /** What one `srvr` reading of every member adds to the packets, summed. */
  private srvrOverhead = 0;
  version = 'unknown';
  readonly members: readonly ProbedMember[];

  /** `servers`: each member's "host:port"; the figures are summed over them. */
  constructor(servers: readonly string[]) {
    if (servers.length === 0) throw new Error('a server probe needs a server');
    this.members = servers.map((hostPort) => {
      const colon = hostPort.lastIndexOf(':');
      return { host: colon > 0 ? hostPort.slice(0, colon) : hostPort, port: colon > 0 ? Number(hostPort.slice(colon + 1)) : 2181, mode: undefined };
    });
    this.overhead = this.members.map(() => ({ packets: 0, bytes: 0 }));
  }

  /** Every server of a connect string (an external ensemble's members are all read and summed). */
  static forConnectString(connectString: string): ServerProbe {
    return new ServerProbe(connectString.split('/')[0].split(',').filter((s) => s.trim() !== ''));
  }

  private word(m: ProbedMember, word: string): Promise<string> {
    return fourLetterWord(m.host, m.port, word, 10_000);
  }

  /** One member's zk_packets_received + zk_packets_sent, from `srvr`; notes its role and the version. */
  private async memberPackets(m: ProbedMember): Promise<number> {
    const text = await this.word(m, 'srvr');
    const received = /^Received: (\d+)/m.exec(text);
    const sent = /^Sent: (\d+)/m.exec(text);
    if (!received || !sent) throw new Error(`srvr of ${m.host}:${m.port} has no packet counts (is srvr whitelisted?): ${text.slice(0, 200)}`);
    const version = /^Zookeeper version: ([^,\s]+)/m.exec(text)?.[1];
    if (version) this.version = version.replace(/-\$\{mvngit\.commit\.id\}/, '');
    m.mode = parseMode(text);
    return Number(received[1]) + Number(sent[1]);
  }

  /** Each member's packets, read together. */
  private packetsByMember(): Promise<number[]> {
    return Promise.all(this.members.map((m) => this.memberPackets(m)));
  }

  /** zk_packets_received + zk_packets_sent, from `srvr`, summed over the members. */
  async packets(): Promise<number> {
    return sum(await this.packetsByMember());
  }

  private async mntr(): Promise<Array<Record<string, string | number>>> {
    return Promise.all(this.members.map(async (m) => parseMntr(await this.word(m, 'mntr'))));
  }

  private static num(m: Record<string, string | number>, key: string): number {
    const v = m[key];
    if (typeof v !== 'number') throw new Error(`mntr has no numeric ${key} (is mntr whitelisted?)`);
    return v;
  }

  private static bytes(m: Record<string, string | number>): number {
    return ServerProbe.num(m, 'zk_bytes_received_count') + (typeof m.zk_response_bytes === 'number' ? m.zk_response_bytes : 0);
  }

  /** Watches the server holds now (zk_watch_count), summed over the members. */
  async watches(): Promise<number> {
    return sum((await this.mntr()).map((m) => ServerProbe.num(m, 'zk_watch_count')));
  }

  /** Learns what the readings cost: the least of a few measurements of nothing, member by member. */
  async calibrate(): Promise<Counters> {
    let prev = await this.packets();
    const srvr: number[] = [];
    for (let i = 0; i < 3; i++) {
      const next = await this.packets();
      srvr.push(next - prev);
      prev = next;
    }
    this.srvrOverhead = Math.min(...srvr);
    this.overhead = this.members.map(() => ({ packets: 0, bytes: 0 }));
    const empty: Array<{ packets: number[]; bytes: number[] }> = [];
    for (let i = 0; i < 3; i++) empty.push(await this.read(async () => undefined));
    this.overhead = this.members.map((_, k) => ({ packets: Math.min(...empty.map((e) => e.packets[k])), bytes: Math.min(...empty.map((e) => e.bytes[k])) }));
    return { packets: sum(this.overhead.map((o) => o.packets)), bytes: sum(this.overhead.map((o) => o.bytes)) };
  }

  /** Each member's counters around `work`, the readings' calibrated share removed. */
  private async read<T>(work: () => Promise<T>): Promise<{ value: T; packets: number[]; bytes: number[]; wallMs: number }> {
    const mntrBefore = await this.mntr();
    const before = await this.packetsByMember();
    const t0 = performance.now();
    const value = await work();
    const wallMs = performance.now() - t0;
    const after = await this.packetsByMember();
    const mntrAfter = await this.mntr();
    return {
      value,
      packets: after.map((a, k) => a - before[k] - this.overhead[k].packets),
      bytes: mntrAfter.map((a, k) => ServerProbe.bytes(a) - ServerProbe.bytes(mntrBefore[k]) - this.overhead[k].bytes),
      wallMs,
    };
  }

  async measure<T>(work: () => Promise<T>): Promise<Measured<T>> {
    const r = await this.read(work);
    return { value: r.value, packets: sum(r.packets), packetsByMember: r.packets, bytes: sum(r.bytes), wallMs: r.wallMs };
  }

  /** Waits until the server holds at least `count` watches. */
  async waitForWatches(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const watches = await this.watches();
      if (watches >= count) return;
      if (Date.now() > deadline) throw new Error(`the server holds ${watches} watches, not ${count}, after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /**
   * Waits until no client sends anything: two readings 50 ms apart that differ only by the
   * reading's own packets, twice in a row. Gives up (returns false) after `timeoutMs`.
   */
  async waitQuiet(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    let prev = await this.packets();
    let calm = 0;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      const next = await this.packets();
      calm = next - prev <= this.srvrOverhead ? calm + 1 : 0;
      if (calm >= 2) return true;
      prev = next;
    }
    return false;
  }
}
