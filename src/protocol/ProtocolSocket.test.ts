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

/** Resolves at the start of a later turn of the event loop. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('ProtocolSocket writes', () => {
  it('sends the first write of a turn at once, and the writes after it in that turn together at its end, in order', async () => {
    const server = await recordingServer();
    const socket = await openSocket(server.port);
    const writes = jest.spyOn(net.Socket.prototype, 'write');
    try {
      socket.write(Buffer.from('first-'));
      expect(writes).toHaveBeenCalledTimes(1);
      socket.write(Buffer.from('second-'));
      socket.write(Buffer.from('third'));
      expect(writes).toHaveBeenCalledTimes(1);
      await server.received(18);
      expect(writes).toHaveBeenCalledTimes(2);
      expect(Buffer.concat(server.chunks).toString()).toBe('first-second-third');

      // A later turn's first write leaves at once again.
      await nextTurn();
      socket.write(Buffer.from('-fourth'));
      expect(writes).toHaveBeenCalledTimes(3);
      await server.received(25);
      expect(Buffer.concat(server.chunks).toString()).toBe('first-second-third-fourth');
    } finally {
      writes.mockRestore();
      socket.destroy();
      await server.close();
    }
  });

  it('sends what a batch writes in one write when the batch returns; later writes of that turn wait for its end', async () => {
    const server = await recordingServer();
    const socket = await openSocket(server.port);
    const writes = jest.spyOn(net.Socket.prototype, 'write');
    try {
      const value = socket.batch(() => {
        socket.write(Buffer.from('create-'));
        socket.write(Buffer.from('list-'));
        expect(writes).not.toHaveBeenCalled();
        return 42;
      });
      expect(value).toBe(42);
      expect(writes).toHaveBeenCalledTimes(1);
      socket.write(Buffer.from('after'));
      expect(writes).toHaveBeenCalledTimes(1);
      await server.received(17);
      expect(writes).toHaveBeenCalledTimes(2);
      expect(Buffer.concat(server.chunks).toString()).toBe('create-list-after');

      // Inside a turn held back already, a batch's writes join what waits, in order.
      await nextTurn();
      socket.write(Buffer.from('-a'));
      socket.write(Buffer.from('-b'));
      socket.batch(() => socket.write(Buffer.from('-c')));
      socket.write(Buffer.from('-d'));
      expect(writes).toHaveBeenCalledTimes(3);
      await server.received(25);
      expect(writes).toHaveBeenCalledTimes(4);
      expect(Buffer.concat(server.chunks).toString()).toBe('create-list-after-a-b-c-d');
    } finally {
      writes.mockRestore();
      socket.destroy();
      await server.close();
    }
  });

  it('drops what was held back when destroyed in the same turn, and writes nothing after', async () => {
    const server = await recordingServer();
    const socket = await openSocket(server.port);
    const writes = jest.spyOn(net.Socket.prototype, 'write');
    try {
      socket.write(Buffer.from('sent at once'));
      socket.write(Buffer.from('never sent'));
      socket.batch(() => socket.write(Buffer.from('nor this')));
      socket.destroy();
      socket.write(Buffer.from('nor that'));
      socket.batch(() => socket.write(Buffer.from('nor the last')));
      await nextTurn();
      expect(writes).toHaveBeenCalledTimes(1);
      expect(writes.mock.calls[0][0]).toEqual(Buffer.from('sent at once'));
    } finally {
      writes.mockRestore();
      await server.close();
    }
  });
});
