import { createServer, type Server } from 'node:net';

/**
 * In a Jest worker, the ports handed out come from a block of the worker's own, below Linux's
 * ephemeral range (32768–60999), where `listen(0)` and outgoing connections take theirs: a port
 * that a stopped server frees is then not taken by another test file's server before the server
 * starts again on it (a client reconnecting would reach the other server). Elsewhere (the CLI's
 * dev server, the chaos and bench runners) the system picks, as it always did.
 */
const FIRST_PORT = 10_000;
const BLOCK_PORTS = 1_000;
const BLOCKS = 22;

// From a random place in the block: each test file has its own copy of this module.
let nextInBlock = Math.floor(Math.random() * BLOCK_PORTS);

function workerBlock(): number | undefined {
  const worker = Number(process.env.JEST_WORKER_ID);
  return Number.isInteger(worker) && worker > 0 ? FIRST_PORT + ((worker - 1) % BLOCKS) * BLOCK_PORTS : undefined;
}

function listen(server: Server, port: number): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(false) : reject(err));
    server.once('error', onError);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', onError);
      resolve(true);
    });
  });
}

/**
 * Reserves `count` distinct free loopback ports. All listeners are held open until every port is
 * known, so one call never returns the same port twice.
 */
export async function freePorts(count: number): Promise<number[]> {
  const block = workerBlock();
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let tried = 0; ports.length < count; tried++) {
      if (block !== undefined && tried >= BLOCK_PORTS) throw new Error(`no free port in ${block}-${block + BLOCK_PORTS - 1}`);
      const server = createServer();
      const wanted = block === undefined ? 0 : block + (nextInBlock++ % BLOCK_PORTS);
      if (!(await listen(server, wanted))) continue;
      servers.push(server);
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('no port was assigned');
      ports.push(address.port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
