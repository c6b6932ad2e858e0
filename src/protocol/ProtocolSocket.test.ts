import * as net from 'node:net';
import { ProtocolSocket, type SocketHandler } from './ProtocolSocket';

/** A TCP server on loopback that records every chunk each connection's socket reads. */
async function recordingServer(): Promise<{ port: number; chunks: Buffer[]; received(bytes: number): Promise<void>; close(): Promise<void> }> {
  const chunks: Buffer[] = [];
  const conns = new Set<net.Socket>();
  let waiter: { bytes: number; resolve: () => void } | undefined;
  const total = () => chunks.reduce((n, c) => n + c.length, 0);
  const server = net.createServer((c) => {
    conns.add(c);
    c.on('data', (chunk) => {
      chunks.push(chunk);
      if (waiter && total() >= waiter.bytes) waiter.resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    chunks,
    received: (bytes) =>
      total() >= bytes
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`received ${total()} of ${bytes} bytes`)), 5_000);
            waiter = { bytes, resolve: () => (clearTimeout(timer), resolve()) };
          }),
    close: () => {
      for (const c of conns) c.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function openSocket(port: number): Promise<ProtocolSocket> {
  return new Promise((resolve, reject) => {
    const handler: SocketHandler = {
      opened: () => resolve(socket),
      frame: () => false,
      established: () => false,
      failed: reject,
    };
    const socket = new ProtocolSocket({ host: '127.0.0.1', port }, undefined, 1 << 20, handler);
  });
}

describe('ProtocolSocket writes', () => {
  it('sends the writes of one turn of the event loop in one write of the socket, in order', async () => {
    const server = await recordingServer();
    const socket = await openSocket(server.port);
    try {
      const writes = jest.spyOn(net.Socket.prototype, 'write');
      const frames = [Buffer.from('first-'), Buffer.from('second-'), Buffer.from('third')];
      for (const f of frames) socket.write(f);
      expect(writes).not.toHaveBeenCalled();
      await server.received(18);
      expect(writes).toHaveBeenCalledTimes(1);
      writes.mockRestore();
      expect(Buffer.concat(server.chunks).toString()).toBe('first-second-third');

      // A later turn's write leaves in a write of its own, as it is.
      socket.write(Buffer.from('-fourth'));
      await server.received(25);
      expect(Buffer.concat(server.chunks).toString()).toBe('first-second-third-fourth');
    } finally {
      socket.destroy();
      await server.close();
    }
  });

  it('drops what was held back when destroyed in the same turn, and writes nothing after', async () => {
    const server = await recordingServer();
    const socket = await openSocket(server.port);
    const writes = jest.spyOn(net.Socket.prototype, 'write');
    try {
      socket.write(Buffer.from('never sent'));
      socket.destroy();
      socket.write(Buffer.from('nor this'));
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(writes).not.toHaveBeenCalled();
    } finally {
      writes.mockRestore();
      await server.close();
    }
  });
});
