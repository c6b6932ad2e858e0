/**
 * The floor of an uncontended acquire+release on the protocol transport: the bare
 * ProtocolTransport doing the two round trips a lock cannot do without, as FloorClient does on the
 * binding. Round trip 1: create our EPHEMERAL_SEQUENTIAL node and list the parent (getChildren2),
 * both sent together; round trip 2: delete the node. No client, no recipe.
 */
import { randomUUID } from 'node:crypto';
import { DEFAULT_CLIENT_OPTIONS, isZkError } from '../../src';
import { ProtocolTransport } from '../../src/protocol/ProtocolTransport';
import { OPEN_ACL } from '../../src/transport/Transport';
import { clockUs } from './clock';

export class ProtocolFloorClient {
  readonly label = 'floor: bare protocol transport, 2 round trips';
  private transport: ProtocolTransport | undefined;
  private readonly ensured = new Set<string>();

  constructor(
    private readonly connectString: string,
    private readonly sessionTimeoutMs: number,
  ) {}

  async open(): Promise<void> {
    const t = new ProtocolTransport({ connectString: this.connectString, sessionTimeoutMs: this.sessionTimeoutMs });
    await new Promise<void>((resolve) => t.on('connected', () => resolve()));
    this.transport = t;
  }

  async close(): Promise<void> {
    await this.transport?.close();
    this.transport = undefined;
  }

  async uncontended(parent: string, iterations: number): Promise<number[]> {
    const t = this.transport as ProtocolTransport;
    const data = DEFAULT_CLIENT_OPTIONS.defaultData;
    if (!this.ensured.has(parent)) {
      let at = '';
      for (const part of parent.split('/').filter(Boolean)) {
        at += `/${part}`;
        await t.create(at, Buffer.alloc(0), 'PERSISTENT', OPEN_ACL).catch((err: unknown) => {
          if (!isZkError(err, 'NODEEXISTS')) throw err;
        });
      }
      this.ensured.add(parent);
    }
    const lat: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const name = `${parent}/_c_${randomUUID()}-lock-`;
      const t0 = clockUs();
      const [created] = await Promise.all([t.create(name, data, 'EPHEMERAL_SEQUENTIAL', OPEN_ACL), t.getChildren(parent)]);
      await t.delete(created, -1);
      lat.push(clockUs() - t0);
    }
    return lat;
  }
}
