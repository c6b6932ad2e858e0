/**
 * The guarded resource of a chaos run: a small process that every guarded operation of the
 * workers goes to, with the fencing token of the lease it is made under. It rejects a token lower
 * than the highest it has accepted, and records every judgement as a history event on stdout (one
 * JSON line each). It runs until its stdin closes.
 *
 * Resources and their rules:
 * - Counters ('mutex', 'latch', 'selector', and 'rw' for writers) are read then written back
 *   incremented by the holder: `read` and `write` are accepted only with a token at least as high
 *   as every token accepted before on the resource. Reads are fenced too, so that a stale holder
 *   that read before a newer holder cannot write afterwards: an increment can then only be lost if
 *   two holders share a token, or if the lock let them overlap with tokens out of order.
 * - Readers of the read-write lock `check` the 'rw' resource: accepted with a token at least as high
 *   as every writer's accepted so far, and a writer must then beat the readers' tokens too. A check
 *   reports any writer "inside" (between its read and its write).
 * - The semaphore ('sem') is not fenced (its leases overlap by design): holders `enter` and `exit`,
 *   and every enter reports who is inside, so more holders than leases shows in the history.
 *
 * Run as `node -r ts-node/register/transpile-only chaos/register.ts`; it prints
 * `{"ready":true,"port":N}` first.
 */
import * as net from 'node:net';
import { createInterface } from 'node:readline';
import { now, type RegisterEvent } from './history';

/** What a worker sends. */
export interface RegisterRequest {
  readonly res: string;
  readonly op: RegisterEvent['op'];
  readonly token: string;
  readonly hold: string;
  readonly worker: number;
  /** For write: the value read, and the value to store. */
  readonly expect?: number;
  readonly value?: number;
}

/** What the register answers. */
export interface RegisterReply {
  readonly accepted: boolean;
  /** The counter value, for an accepted read. */
  readonly value?: number;
  /** Other holds inside the resource when the operation came. */
  readonly inside?: readonly string[];
}

interface Resource {
  value: number;
  /** Highest token accepted from an exclusive holder (counter op). */
  highestExclusive: bigint;
  /** Highest token accepted from a reader (check). */
  highestShared: bigint;
  /** Holds inside: exclusive holders between read and write, or semaphore holders; with their tokens. */
  readonly inside: Map<string, bigint>;
}

/** The register's state and rules, apart from the transport, so that they can be read in one place. */
export class Register {
  private readonly resources = new Map<string, Resource>();

  constructor(private readonly emit: (event: RegisterEvent) => void) {}

  private resource(name: string): Resource {
    let r = this.resources.get(name);
    if (!r) {
      r = { value: 0, highestExclusive: -1n, highestShared: -1n, inside: new Map() };
      this.resources.set(name, r);
    }
    return r;
  }

  judge(req: RegisterRequest): RegisterReply {
    const r = this.resource(req.res);
    const token = BigInt(req.token);
    const base = { type: 'register' as const, worker: req.worker, hold: req.hold, res: req.res, op: req.op, token: req.token };
    switch (req.op) {
      case 'read':
      case 'write': {
        const bar = r.highestExclusive > r.highestShared ? r.highestExclusive : r.highestShared;
        const accepted = token >= bar;
        const inside = [...r.inside.keys()].filter((h) => h !== req.hold);
        const before = r.value;
        if (accepted) {
          r.highestExclusive = token > r.highestExclusive ? token : r.highestExclusive;
          this.supersede(r, token, req.hold);
          if (req.op === 'read') r.inside.set(req.hold, token);
          else {
            r.value = Number(req.value);
            r.inside.delete(req.hold);
          }
        } else r.inside.delete(req.hold);
        this.emit({
          ...base,
          at: now(),
          accepted,
          highest: bar.toString(),
          before,
          after: r.value,
          ...(req.op === 'write' ? { expect: req.expect } : {}),
          inside,
        });
        return { accepted, value: accepted ? r.value : undefined, inside };
      }
      case 'check': {
        const accepted = token >= r.highestExclusive;
        const inside = [...r.inside.keys()];
        if (accepted) {
          r.highestShared = token > r.highestShared ? token : r.highestShared;
          this.supersede(r, token, req.hold);
        }
        this.emit({ ...base, at: now(), accepted, highest: r.highestExclusive.toString(), before: r.value, after: r.value, inside });
        return { accepted, value: r.value, inside };
      }
      case 'enter': {
        r.inside.set(req.hold, token);
        const inside = [...r.inside.keys()];
        this.emit({ ...base, at: now(), accepted: true, highest: '-1', inside });
        return { accepted: true, inside };
      }
      case 'exit': {
        r.inside.delete(req.hold);
        this.emit({ ...base, at: now(), accepted: true, highest: '-1', inside: [...r.inside.keys()] });
        return { accepted: true };
      }
      default:
        throw new Error(`unknown register operation ${String((req as { op: unknown }).op)}`);
    }
  }

  /** A hold inside with a lower token than an accepted newer one is fenced off: it no longer counts as inside. */
  private supersede(r: Resource, token: bigint, hold: string): void {
    for (const [other, t] of r.inside) if (other !== hold && t < token) r.inside.delete(other);
  }
}

/** Serves the register on loopback: one JSON line per request (`{id, request}`), one per reply (`{id, reply}` or `{id, error}`). */
export function serveRegister(register: Register): net.Server {
  return net.createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    createInterface({ input: socket }).on('line', (line) => {
      let id: unknown;
      try {
        const message = JSON.parse(line) as { id: unknown; request: RegisterRequest };
        id = message.id;
        socket.write(`${JSON.stringify({ id, reply: register.judge(message.request) })}\n`);
      } catch (err) {
        socket.write(`${JSON.stringify({ id, error: String(err) })}\n`);
      }
    });
  });
}

function main(): void {
  const server = serveRegister(new Register((event) => process.stdout.write(`${JSON.stringify(event)}\n`)));
  server.listen({ host: '127.0.0.1', port: 0 }, () => {
    const { port } = server.address() as net.AddressInfo;
    process.stdout.write(`${JSON.stringify({ ready: true, port })}\n`);
  });
  // The runner holds our stdin: when it goes, so do we.
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}

if (require.main === module) main();
