/**
 * A connect string that points at something other than ZooKeeper (an HTTP port, another service):
 * the first reply is read as a frame length ("HTTP" is 1213486160), which used to be reported as a
 * frame over the limit, inviting the user to raise maxFrameBytes. The client says instead that
 * the peer is not a ZooKeeper server, and shows what it sent.
 */
import * as http from 'node:http';
import * as net from 'node:net';
import { ConnectionTimeoutError } from '../../src';
import { Clients, eventually } from '../helpers';

const clients = new Clients();

afterEach(() => clients.closeAll());

/** Listens on a free loopback port; resolves with the port. */
async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

/** The message of the connection timeout once the client has made an attempt at the peer. */
async function timeoutMessage(connectString: string): Promise<string> {
  const client = clients.create({ connectString, transport: 'protocol' });
  client.start();
  // Short waits, repeated: the first may end before the first attempt has been answered.
  return eventually('a connection timeout that says why', async () => {
    const err = await client.blockUntilConnected({ timeoutMs: 200 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConnectionTimeoutError);
    const message = (err as Error).message;
    return message.includes('last attempt failed') && message;
  });
}

describe('a peer that is not a ZooKeeper server', () => {
  it('an HTTP port: says so, and shows the first line it sent', async () => {
    const server = http.createServer((_req, res) => res.end('hello'));
    const port = await listen(server);
    try {
      const message = await timeoutMessage(`127.0.0.1:${port}`);
      expect(message).toMatch(
        new RegExp(
          `^no connection to 127\\.0\\.0\\.1:${port} within \\d+ ms; the last attempt failed: 127\\.0\\.0\\.1:${port} is not a ZooKeeper server ` +
            `\\(another service on that port\\?\\): its first reply, "HTTP/1\\.1 400 Bad Request…", announces a frame of 1213486160 bytes$`,
        ),
      );
      expect(message).not.toContain('maxFrameBytes');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a binary reply that is no answer to the handshake: says so, with its bytes in hex', async () => {
    // A plausible length, then bytes too few for ZooKeeper's answer (ConnectResponse).
    const server = net.createServer((socket) => socket.once('data', () => socket.end(Buffer.from([0, 0, 0, 3, 1, 2, 3]))));
    const port = await listen(server);
    try {
      const message = await timeoutMessage(`127.0.0.1:${port}`);
      expect(message).toContain(`127.0.0.1:${port} is not a ZooKeeper server (another service on that port?): its first reply, <00 00 00 03 01 02 03>, is not an answer to the handshake (`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
