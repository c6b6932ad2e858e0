import { ZkError } from '../src';
import { transportFactory } from '../src/client/chooseTransport';
import type { Transport, TransportFactory } from '../src/transport/Transport';
import { deferred } from '../src/util/async';
import { TEST_TRANSPORT } from './helpers';

/** Which paths a hold or a failure applies to, when it is not one exact path. */
export type PathMatch = (path: string) => boolean;

function matches(want: string | PathMatch, path: string): boolean {
  return typeof want === 'string' ? want === path : want(path);
}

/** A held reply: `reached` resolves when the server has answered; the client sees the answer after `release()`. */
export interface HeldReply {
  readonly reached: Promise<void>;
  release(): void;
}

/**
 * Transports (of the tests' transport, see TEST_TRANSPORT) that log every call ("getData /path")
 * and can hold back the reply of one chosen call, so a test can make something happen between a
 * server's answer and the moment the client acts on it. They offer the core operations only (none
 * of create2, multi, …), so the client takes the paths the tracing sees, on either transport.
 */
export class InstrumentedTransports {
  /** Every call made, "method path", in order. */
  readonly calls: string[] = [];
  /** Every reply received (before any hold), "method path" or "method path failed", in order. */
  readonly replies: string[] = [];
  private holds: Array<{ method: string; path: string | PathMatch; reached: () => void; released: Promise<void> }> = [];

  /** Holds the next successful reply of a `method` call on `path`. */
  holdNext(method: 'exists' | 'getData' | 'getChildren' | 'create', path: string | PathMatch): HeldReply {
    const reached = deferred<void>();
    const released = deferred<void>();
    this.holds.push({ method, path, reached: () => reached.resolve(), released: released.promise });
    return { reached: reached.promise, release: () => released.resolve() };
  }

  /**
   * Makes the next create of a node under `parent` create nothing and answer `answer` instead: the
   * client then believes a node it did not create is its own, as it would with a stale view.
   */
  answerNextCreate(parent: string, answer: string): void {
    this.fakeCreates.push({ parent, answer });
  }

  private fakeCreates: Array<{ parent: string; answer: string }> = [];

  /**
   * Makes the next `method` call on `path` fail with CONNECTIONLOSS without reaching the server,
   * as if the connection had dropped while it was in flight. `failed` resolves when it has.
   */
  failNext(method: 'exists' | 'getData' | 'getChildren' | 'create', path: string | PathMatch): { failed: Promise<void> } {
    const failed = deferred<void>();
    this.failures.push({ method, path, failed: () => failed.resolve() });
    return { failed: failed.promise };
  }

  private failures: Array<{ method: string; path: string | PathMatch; failed: () => void }> = [];

  readonly factory: TransportFactory = (options) => {
    const t = transportFactory(TEST_TRANSPORT)(options);
    const traced = <A extends unknown[], R>(method: string, call: (path: string, ...args: A) => Promise<R>) =>
      (path: string, ...args: A): Promise<R> => {
        this.calls.push(`${method} ${path}`);
        const failure = this.failures.findIndex((f) => f.method === method && matches(f.path, path));
        if (failure >= 0) {
          const [{ failed }] = this.failures.splice(failure, 1);
          this.replies.push(`${method} ${path} failed`);
          failed();
          return Promise.reject(new ZkError('CONNECTIONLOSS', `connection lost (simulated) at ${path}`, { path }));
        }
        const reply = call(path, ...args);
        reply.then(
          () => this.replies.push(`${method} ${path}`),
          () => this.replies.push(`${method} ${path} failed`),
        );
        const hold = this.holds.find((h) => h.method === method && matches(h.path, path));
        if (hold === undefined) return reply;
        // Only a successful reply is held; a failed one passes and the hold waits for the next.
        return reply.then(async (value) => {
          const i = this.holds.indexOf(hold);
          if (i < 0) return value;
          this.holds.splice(i, 1);
          hold.reached();
          await hold.released;
          return value;
        });
      };
    const wrapped: Transport = {
      get sessionId() {
        return t.sessionId;
      },
      get sessionPassword() {
        return t.sessionPassword;
      },
      get negotiatedSessionTimeoutMs() {
        return t.negotiatedSessionTimeoutMs;
      },
      get isClosed() {
        return t.isClosed;
      },
      get lastHeardAt() {
        return t.lastHeardAt;
      },
      get lastConnectError() {
        return t.lastConnectError;
      },
      get aclOnCreate() {
        return t.aclOnCreate;
      },
      on: (event, listener) => t.on(event, listener),
      off: (event, listener) => t.off(event, listener),
      close: () => t.close(),
      create: traced('create', (p, data: Buffer, mode: Parameters<Transport['create']>[2], acl: Parameters<Transport['create']>[3], ttlMs?: number) => {
        const fake = this.fakeCreates.findIndex((f) => p.startsWith(`${f.parent}/`));
        if (fake < 0) return t.create(p, data, mode, acl, ttlMs);
        const [{ answer }] = this.fakeCreates.splice(fake, 1);
        return Promise.resolve(answer);
      }),
      delete: traced('delete', (p, version: number) => t.delete(p, version)),
      exists: traced('exists', (p, watcher?: Parameters<Transport['exists']>[1]) => t.exists(p, watcher)),
      getData: traced('getData', (p, watcher?: Parameters<Transport['getData']>[1]) => t.getData(p, watcher)),
      setData: traced('setData', (p, data: Buffer, version: number) => t.setData(p, data, version)),
      getChildren: traced('getChildren', (p, watcher?: Parameters<Transport['getChildren']>[1]) => t.getChildren(p, watcher)),
      sync: (p) => t.sync(p),
      getACL: (p) => t.getACL(p),
      setACL: traced('setACL', (p, acl: Parameters<Transport['setACL']>[1], version: number) => t.setACL(p, acl, version)),
      addAuth: (scheme, auth) => t.addAuth(scheme, auth),
    };
    return wrapped;
  };
}
