/**
 * A worker's side of the register: one TCP connection, opened once at the worker's start and kept
 * for the whole run, carrying one JSON line per request and per reply, matched by id.
 *
 * Why one connection opened early: with the native transport, the `zookeeper` binding can take the
 * readiness of a socket that the process opens after the binding's own socket was closed (a
 * reconnect after an event-loop stall longer than the session's receive timeout): the binding's
 * poll handle still names the old descriptor number and removes it from the event loop when it
 * lets go. A connection per request (or a pool that opens new ones) would sooner or later land on
 * such a number and never hear its reply; a connection opened before any ZooKeeper handle cannot.
 * See chaos/README.md ("The native binding and the other sockets of a process").
 */
import * as net from 'node:net';
import { createInterface } from 'node:readline';
import type { RegisterReply, RegisterRequest } from './register';

/** How long a call waits for its reply before it fails: far above any judgement's time. */
export const REGISTER_CALL_LIMIT_MS = 10_000;

interface Waiting {
  resolve(reply: RegisterReply): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export class RegisterClient {
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private broken: Error | undefined;

  private constructor(
    private readonly socket: net.Socket,
    private readonly limitMs: number,
  ) {
    createInterface({ input: socket }).on('line', (line) => this.answer(line));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('the register closed its connection')));
  }

  /** Connects to the register at `port` on loopback. */
  static connect(port: number, limitMs = REGISTER_CALL_LIMIT_MS): Promise<RegisterClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        socket.setNoDelay(true);
        resolve(new RegisterClient(socket, limitMs));
      });
    });
  }

  /** Sends one operation; rejects only when the register cannot be reached or does not answer within the limit (never a fault of the run). */
  call(request: RegisterRequest): Promise<RegisterReply> {
    if (this.broken) return Promise.reject(this.broken);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`the register did not answer ${request.op} of ${request.hold} within ${this.limitMs} ms`));
      }, this.limitMs);
      this.waiting.set(id, { resolve, reject, timer });
      this.socket.write(`${JSON.stringify({ id, request })}\n`);
    });
  }

  close(): void {
    this.fail(new Error('the register client is closed'));
    this.socket.destroy();
  }

  private answer(line: string): void {
    const message = JSON.parse(line) as { id: number; reply?: RegisterReply; error?: string };
    const waiting = this.waiting.get(message.id);
    if (!waiting) return;
    this.waiting.delete(message.id);
    clearTimeout(waiting.timer);
    if (message.reply) waiting.resolve(message.reply);
    else waiting.reject(new Error(`the register refused the request: ${message.error ?? 'no reason given'}`));
  }

  private fail(err: Error): void {
    this.broken ??= err;
    for (const [id, waiting] of this.waiting) {
      this.waiting.delete(id);
      clearTimeout(waiting.timer);
      waiting.reject(err);
    }
  }
}
