import * as net from 'node:net';
import { Register, serveRegister } from './register';
import { RegisterClient } from './registerClient';

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, () => resolve((server.address() as net.AddressInfo).port)));
}

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

describe('the register client', () => {
  it('matches concurrent replies to their calls, over the one connection it opened', async () => {
    const server = serveRegister(new Register(() => undefined));
    let connections = 0;
    server.on('connection', () => connections++);
    const client = await RegisterClient.connect(await listen(server));
    try {
      const holds = Array.from({ length: 40 }, (_, i) => `h${i}`);
      const replies = await Promise.all(holds.map((hold, i) => client.call({ res: 'sem', op: 'enter', token: String(i), hold, worker: 0 })));
      // Each enter reports who is inside: the i-th reply names the first i + 1 holds, so a reply
      // given to the wrong call would show.
      replies.forEach((reply, i) => expect(reply.inside).toEqual(holds.slice(0, i + 1)));
      expect(connections).toBe(1);
    } finally {
      client.close();
      await closeServer(server);
    }
  });

  it('says why when the register refuses a request', async () => {
    const server = serveRegister(new Register(() => undefined));
    const client = await RegisterClient.connect(await listen(server));
    try {
      await expect(client.call({ res: 'sem', op: 'nonsense' as 'enter', token: '1', hold: 'h', worker: 0 })).rejects.toThrow(/refused the request: .*unknown register operation nonsense/);
    } finally {
      client.close();
      await closeServer(server);
    }
  });

  it('fails a call that is not answered within its limit, and every pending call when the connection goes', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => {
      sockets.push(socket);
      socket.resume();
    });
    const client = await RegisterClient.connect(await listen(silent), 200);
    try {
      const started = Date.now();
      await expect(client.call({ res: 'sem', op: 'enter', token: '1', hold: 'late', worker: 0 })).rejects.toThrow('the register did not answer enter of late within 200 ms');
      expect(Date.now() - started).toBeLessThan(5_000);
      const pending = client.call({ res: 'sem', op: 'exit', token: '1', hold: 'cut', worker: 0 });
      sockets.forEach((s) => s.end());
      await expect(pending).rejects.toThrow('the register closed its connection');
      await expect(client.call({ res: 'sem', op: 'exit', token: '1', hold: 'after', worker: 0 })).rejects.toThrow('the register closed its connection');
    } finally {
      client.close();
      await closeServer(silent);
    }
  });
});
