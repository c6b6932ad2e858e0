/**
 * The floor of an uncontended acquire+release: the bare `zookeeper` binding doing the two round
 * trips a lock cannot do without. Round trip 1: create our EPHEMERAL_SEQUENTIAL node and list the
 * parent (getChildren2), both sent together; round trip 2: delete the node. No recipe logic, no
 * promises around the binding beyond one per call, the same node name shape and data as
 * zk-recipes' (a protected name, the holder id as data).
 */
import { randomUUID } from 'node:crypto';
import ZooKeeperBinding from 'zookeeper';
import { DEFAULT_CLIENT_OPTIONS } from '../../src';
import { clockUs } from './clock';

/* eslint-disable @typescript-eslint/no-explicit-any -- the binding has no usable typings */
const C = (ZooKeeperBinding as any).constants as Record<string, number>;

function call<T>(start: (cb: (rc: number, message: string, value: T) => void) => number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const rc = start((code, message, value) => (code === 0 ? resolve(value) : reject(Object.assign(new Error(message), { code }))));
    if (rc !== 0) reject(Object.assign(new Error(`native call refused: ${rc}`), { code: rc }));
  });
}

export class FloorClient {
  readonly label = 'floor: bare binding, 2 round trips';
  private handle: any;
  private readonly ensured = new Set<string>();

  constructor(
    private readonly connectString: string,
    private readonly sessionTimeoutMs: number,
  ) {}

  async open(): Promise<void> {
    const zk = new (ZooKeeperBinding as any)({ connect: this.connectString, timeout: this.sessionTimeoutMs, debug_level: 0, host_order_deterministic: false });
    await new Promise<void>((resolve) => {
      zk.once('connect', () => resolve());
      zk.init({});
    });
    this.handle = zk;
  }

  close(): void {
    this.handle?.close();
    this.handle = undefined;
  }

  /** Creates `path` and its ancestors as persistent nodes where missing. */
  async ensurePath(path: string): Promise<void> {
    const native = this.handle.native;
    let at = '';
    for (const part of path.split('/').filter(Boolean)) {
      at += `/${part}`;
      await call((cb) => native.a_create(at, Buffer.alloc(0), C.ZOO_PERSISTENT, cb)).catch((err: { code?: number }) => {
        if (err.code !== C.ZNODEEXISTS) throw err;
      });
    }
  }

  async uncontended(parent: string, iterations: number): Promise<number[]> {
    const native = this.handle.native;
    const data = DEFAULT_CLIENT_OPTIONS.defaultData;
    const flags = C.ZOO_EPHEMERAL_SEQUENTIAL;
    if (!this.ensured.has(parent)) {
      await this.ensurePath(parent);
      this.ensured.add(parent);
    }
    const lat: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const name = `${parent}/_c_${randomUUID()}-lock-`;
      const t0 = clockUs();
      const [created] = await Promise.all([
        call<string>((cb) => native.a_create(name, data, flags, cb)),
        call<unknown>((cb) => native.a_get_children2(parent, false, cb)),
      ]);
      await call((cb) => native.a_delete_(created, -1, cb));
      lat.push(clockUs() - t0);
    }
    return lat;
  }
}
