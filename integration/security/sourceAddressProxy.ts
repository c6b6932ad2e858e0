import net from 'node:net';

/**
 * A plain TCP relay on 127.0.0.1 that connects to one server from another loopback address: a
 * client behind it reaches the server as `sourceAddress` (127.0.0.2, say), so `ip` ACLs can tell it
 * from a client that connects directly (127.0.0.1). Linux routes all of 127/8 to loopback.
 */
export class SourceAddressProxy {
  private constructor(
    private readonly server: net.Server,
    private readonly sockets: Set<net.Socket>,
    /** "127.0.0.1:port", to give the client. */
    readonly connectString: string,
  ) {}

  /** Listens on `listenPort` (default: a free one). */
  static async start(upstream: { host: string; port: number }, sourceAddress: string, listenPort = 0): Promise<SourceAddressProxy> {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((client) => {
      const up = net.connect({ host: upstream.host, port: upstream.port, localAddress: sourceAddress });
      for (const s of [client, up]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          up.destroy();
        });
      }
      client.pipe(up);
      up.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listenPort, '127.0.0.1', () => resolve());
    });
    return new SourceAddressProxy(server, sockets, `127.0.0.1:${(server.address() as net.AddressInfo).port}`);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
