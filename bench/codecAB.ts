/**
 * The protocol transport's codec, A/B in one process: the messages of one uncontended pair
 * (create2 and getChildren2 requests, delete; their three reply headers, the Create2Response and a
 * GetChildren2Response of one child) encoded and decoded by the schema records and by the
 * hand-written codec, in interleaved blocks. Reports CPU time per pair for each and their ratio,
 * the JS heap allocated per pair (heap growth with garbage collection held off: not
 * load-dependent) and the buffer memory of the requests.
 *
 *   node --expose-gc --max-semi-space-size=128 -r ts-node/register/transpile-only bench/codecAB.ts
 */
import {
  encodeCreate,
  encodePathVersion,
  encodePathWatch,
  readCreate2Response,
  readGetChildren2Response,
  readReplyHeader,
} from '../src/protocol/codec';
import { JuteReader, JuteWriter } from '../src/protocol/jute';
import { CreateFlags, OpCode } from '../src/protocol/opcodes';
import {
  Create2ResponseRecord,
  CreateRequestRecord,
  GetChildren2ResponseRecord,
  PathVersionRecord,
  PathWatchRecord,
  ReplyHeaderRecord,
} from '../src/protocol/records';
import { frame } from '../src/protocol/requests';
import { OPEN_ACL, type Stat } from '../src/transport/Transport';

const parent = '/bench/uncontended/zk-recipes-0';
const name = `${parent}/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-`;
const created = `${name}0000000042`;
const data = Buffer.from('10.0.0.1');
const flags = CreateFlags.EPHEMERAL_SEQUENTIAL;
const stat: Stat = {
  czxid: 0x3_0000_1a2bn,
  mzxid: 0x3_0000_1a2bn,
  ctime: 1_764_160_000_000,
  mtime: 1_764_160_000_000,
  version: 0,
  cversion: 0,
  aversion: 0,
  ephemeralOwner: 0x1_0000_a3b2_c000_5n,
  dataLength: data.length,
  numChildren: 0,
  pzxid: 0x3_0000_1a2bn,
};
const parentStat: Stat = { ...stat, czxid: 0x3_0000_0002n, mzxid: 0x3_0000_0002n, ephemeralOwner: 0n, dataLength: 0, numChildren: 1, cversion: 84 };

function bytesOf(write: (w: JuteWriter) => void): Buffer {
  const w = new JuteWriter();
  write(w);
  return Buffer.from(w.bytes());
}
const header = (xid: number) => bytesOf((w) => ReplyHeaderRecord.write(w, { xid, zxid: 0x3_0000_1a2bn, err: 0 }));
const createReply = Buffer.concat([header(1), bytesOf((w) => Create2ResponseRecord.write(w, { path: created, stat }))]);
const childrenReply = Buffer.concat([header(2), bytesOf((w) => GetChildren2ResponseRecord.write(w, { children: [created.slice(parent.length + 1)], stat: parentStat }))]);
const deleteReply = header(3);

let sink = 0;

/** One pair's messages through the schema records (the codec before codec.ts). */
function schemaPair(): void {
  const a = frame(OpCode.create2, 0, (w) => CreateRequestRecord.write(w, { path: name, data, acl: OPEN_ACL, flags }));
  const b = frame(OpCode.getChildren2, 0, (w) => PathWatchRecord.write(w, { path: parent, watch: false }));
  const c = frame(OpCode.delete, 0, (w) => PathVersionRecord.write(w, { path: created, version: -1 }));
  let r = new JuteReader(createReply);
  const h1 = ReplyHeaderRecord.read(r);
  const x = Create2ResponseRecord.read(r);
  r = new JuteReader(childrenReply);
  const h2 = ReplyHeaderRecord.read(r);
  const y = GetChildren2ResponseRecord.read(r);
  const h3 = ReplyHeaderRecord.read(new JuteReader(deleteReply));
  sink += a.length + b.length + c.length + h1.xid + h2.xid + h3.xid + x.stat.version + y.children.length;
}

/** The same through codec.ts. */
function handPair(): void {
  const a = encodeCreate(OpCode.create2, name, data, OPEN_ACL, flags);
  const b = encodePathWatch(OpCode.getChildren2, parent, false);
  const c = encodePathVersion(OpCode.delete, created, -1);
  let r = new JuteReader(createReply);
  const h1 = readReplyHeader(r);
  const x = readCreate2Response(r);
  r = new JuteReader(childrenReply);
  const h2 = readReplyHeader(r);
  const y = readGetChildren2Response(r);
  const h3 = readReplyHeader(new JuteReader(deleteReply));
  sink += a.length + b.length + c.length + h1.xid + h2.xid + h3.xid + x.stat.version + y.children.length;
}

function cpuUs(fn: () => void, n: number): number {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / n;
}

/**
 * JS heap allocated per call: growth over `n` calls with no collection in between. (Buffers'
 * backing memory comes from Node's shared pools, whose accounting is too coarse to count here.)
 */
function allocated(fn: () => void, n: number): string {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return 'n/a (run with --expose-gc)';
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < n; i++) fn();
  return `${((process.memoryUsage().heapUsed - before) / n).toFixed(0)} B`;
}

/** Buffer memory the three requests take: the schema writer starts each at 256 bytes; codec.ts at the frame's size. */
function requestBytes(): string {
  const exact = encodeCreate(OpCode.create2, name, data, OPEN_ACL, flags).length + encodePathWatch(OpCode.getChildren2, parent, false).length + encodePathVersion(OpCode.delete, created, -1).length;
  return `schema ${3 * 256} B, hand-written ${exact} B`;
}

const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)];

const BLOCK = 20_000;
for (let i = 0; i < 5; i++) {
  cpuUs(schemaPair, BLOCK);
  cpuUs(handPair, BLOCK);
}
const schema: number[] = [];
const hand: number[] = [];
const ratios: number[] = [];
for (let round = 0; round < 30; round++) {
  // Alternate which goes first, so neither always runs on a warmer cache.
  const [s, h] = round % 2 === 0 ? [cpuUs(schemaPair, BLOCK), cpuUs(handPair, BLOCK)] : [Number.NaN, cpuUs(handPair, BLOCK)];
  const s2 = Number.isNaN(s) ? cpuUs(schemaPair, BLOCK) : s;
  schema.push(s2);
  hand.push(h);
  ratios.push(h / s2);
}
console.log(`CPU per pair: schema ${median(schema).toFixed(3)} µs, hand-written ${median(hand).toFixed(3)} µs; hand ÷ schema ${median(ratios).toFixed(3)} (median of ${ratios.length} interleaved blocks of ${BLOCK})`);
console.log(`JS heap allocated per pair: schema ${allocated(schemaPair, 2_000)}, hand-written ${allocated(handPair, 2_000)}; request buffers per pair: ${requestBytes()}`);
if (sink === 0) console.log('unreachable');
