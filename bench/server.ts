/**
 * What the ZooKeeper server says it did. Packets: `srvr`'s "Received" + "Sent" (the server's
 * zk_packets_received + zk_packets_sent: every request, response and watch notification of every
 * client). Bytes: `mntr`'s zk_bytes_received_count + zk_response_bytes. Watches: `mntr`'s
 * zk_watch_count. (`srvr` is read for packets because a reading of it always costs the same two
 * packets, whereas `mntr`'s long answer costs more packets as its figures grow.)
 *
 * A measurement reads the counters right before and right after the measured work, with no other
 * client talking to the server (every other library's sessions are closed; idle sessions of the
 * library under test send at most a ping every 10 s with the 30 s session timeout used
 * throughout), and subtracts what the readings themselves add, calibrated at start by measuring
 * nothing.
 */
import { fourLetterWord, parseMntr } from '../src/testing';

export interface Counters {
  packets: number;
  bytes: number;
}

export interface Measured<T> {
  value: T;
  /** Server packets during the work, the readings' own removed. */
  packets: number;
  bytes: number;
  wallMs: number;
}

export class ServerProbe {
  /** What the readings of one measurement add to the counters. */
  private overhead: Counters = { packets: 0, bytes: 0 };
  /** What one `srvr` reading adds to the packets. */
  private srvrOverhead = 0;
  version = 'unknown';

  constructor(
    readonly host: string,
    readonly port: number,
  ) {}

  /** The first server of a connect string. */
  static forConnectString(connectString: string): ServerProbe {
    const first = connectString.split('/')[0].split(',')[0];
    const colon = first.lastIndexOf(':');
    return new ServerProbe(colon > 0 ? first.slice(0, colon) : first, colon > 0 ? Number(first.slice(colon + 1)) : 2181);
  }

  private async word(word: string): Promise<string> {
    return fourLetterWord(this.host, this.port, word, 10_000);
  }

  /** zk_packets_received + zk_packets_sent, from `srvr`. */
  async packets(): Promise<number> {
    const text = await this.word('srvr');
    const received = /^Received: (\d+)/m.exec(text);
    const sent = /^Sent: (\d+)/m.exec(text);
    if (!received || !sent) throw new Error(`srvr of ${this.host}:${this.port} has no packet counts (is srvr whitelisted?): ${text.slice(0, 200)}`);
    const version = /^Zookeeper version: ([^,\s]+)/m.exec(text)?.[1];
    if (version) this.version = version.replace(/-\$\{mvngit\.commit\.id\}/, '');
    return Number(received[1]) + Number(sent[1]);
  }

  private async mntr(): Promise<Record<string, string | number>> {
    return parseMntr(await this.word('mntr'));
  }

  private static num(m: Record<string, string | number>, key: string): number {
    const v = m[key];
    if (typeof v !== 'number') throw new Error(`mntr has no numeric ${key} (is mntr whitelisted?)`);
    return v;
  }

  private static bytes(m: Record<string, string | number>): number {
    return ServerProbe.num(m, 'zk_bytes_received_count') + (typeof m.zk_response_bytes === 'number' ? m.zk_response_bytes : 0);
  }

  /** Watches the server holds now (zk_watch_count). */
  async watches(): Promise<number> {
    return ServerProbe.num(await this.mntr(), 'zk_watch_count');
  }

  /** Learns what the readings cost: the least of a few measurements of nothing. */
  async calibrate(): Promise<Counters> {
    let prev = await this.packets();
    const srvr: number[] = [];
    for (let i = 0; i < 3; i++) {
      const next = await this.packets();
      srvr.push(next - prev);
      prev = next;
    }
    this.srvrOverhead = Math.min(...srvr);
    this.overhead = { packets: 0, bytes: 0 };
    const empty: Counters[] = [];
    for (let i = 0; i < 3; i++) {
      const m = await this.measure(async () => undefined);
      empty.push({ packets: m.packets, bytes: m.bytes });
    }
    this.overhead = { packets: Math.min(...empty.map((c) => c.packets)), bytes: Math.min(...empty.map((c) => c.bytes)) };
    return this.overhead;
  }

  async measure<T>(work: () => Promise<T>): Promise<Measured<T>> {
    const mntrBefore = await this.mntr();
    const before = await this.packets();
    const t0 = performance.now();
    const value = await work();
    const wallMs = performance.now() - t0;
    const after = await this.packets();
    const mntrAfter = await this.mntr();
    return {
      value,
      packets: after - before - this.overhead.packets,
      bytes: ServerProbe.bytes(mntrAfter) - ServerProbe.bytes(mntrBefore) - this.overhead.bytes,
      wallMs,
    };
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
