/**
 * Regenerates javaClient.json: the bytes the ZooKeeper Java client (Debian's
 * /usr/share/java/zookeeper.jar, or ZOOKEEPER_CLASSPATH) sends for CaptureJavaClient.java's fixed
 * sequence of requests, captured by a socket between it and a TestingServer. The golden tests
 * compare the protocol transport's bytes with them.
 *
 * Usage: node -r ts-node/register/transpile-only test/protocol/captureJavaClient.ts
 */
import { spawnSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import { TestingServer } from '../../src/testing';
import { locateZooKeeper } from '../../src/testing/installation';
import { FrameDecoder } from '../../src/protocol/framing';
import { OpCode } from '../../src/protocol/opcodes';

/** What the Java program sends, in order, pings left out: a name per frame, checked against its opcode. */
export const JAVA_SEQUENCE: ReadonlyArray<readonly [string, number | 'connect']> = [
  ['connect', 'connect'],
  ['auth', OpCode.auth],
  ['create', OpCode.create],
  ['createEphemeralSequential', OpCode.create],
  ['createTTL', OpCode.createTTL],
  ['createContainer', OpCode.createContainer],
  ['create2', OpCode.create2],
  ['getDataWatch', OpCode.getData],
  ['existsWatch', OpCode.exists],
  ['getChildren2Watch', OpCode.getChildren2],
  ['addWatchRecursive', OpCode.addWatch],
  ['reconnect', 'connect'],
  ['reconnectAuth', OpCode.auth],
  ['reconnectSetWatches2', OpCode.setWatches2],
  ['setData', OpCode.setData],
  ['multi', OpCode.multi],
  ['multiRead', OpCode.multiRead],
  ['sync', OpCode.sync],
  ['getACL', OpCode.getACL],
  ['setACL', OpCode.setACL],
  ['getEphemerals', OpCode.getEphemerals],
  ['getAllChildrenNumber', OpCode.getAllChildrenNumber],
  ['whoAmI', OpCode.whoAmI],
  ['checkWatches', OpCode.checkWatches],
  ['removeWatches', OpCode.removeWatches],
  ['delete', OpCode.delete],
  ['closeSession', OpCode.closeSession],
];

function javac(): string {
  const tool = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'javac') : 'javac';
  if (spawnSync(tool, ['-version']).status !== 0) throw new Error(`${tool} not found: apt-get install -y default-jdk-headless`);
  return tool;
}

async function main(): Promise<void> {
  const install = locateZooKeeper();
  const classes = mkdtempSync(join(tmpdir(), 'zk-capture-'));
  const compiled = spawnSync(javac(), ['-d', classes, '-cp', install.classpath, join(__dirname, 'CaptureJavaClient.java')], { encoding: 'utf8' });
  if (compiled.status !== 0) throw new Error(`javac failed:\n${compiled.stderr}`);

  await using server = await TestingServer.start({ forceSync: false });
  // Client-to-server bytes of each connection, in the order the connections came.
  const streams: Buffer[][] = [];
  const open = new Set<net.Socket>();
  const capture = net.createServer((client) => {
    const bytes: Buffer[] = [];
    streams.push(bytes);
    const upstream = net.connect(server.port, '127.0.0.1');
    open.add(client);
    for (const s of [client, upstream]) s.on('error', () => undefined);
    client.on('data', (chunk: Buffer) => {
      bytes.push(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', () => {
      open.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => capture.listen(0, '127.0.0.1', () => resolve()));
  const { port } = capture.address() as net.AddressInfo;

  const java = spawn(install.java, ['-cp', [classes, install.classpath].join(delimiter), 'zkrecipes.capture.CaptureJavaClient', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  createInterface({ input: java.stdout }).on('line', (line) => {
    if (line === 'RECONNECT') for (const s of open) s.destroy();
  });
  const code = await new Promise<number | null>((resolve) => java.once('exit', resolve));
  capture.close();
  rmSync(classes, { recursive: true, force: true });
  if (code !== 0) throw new Error(`the Java client exited with ${code}`);

  const frames: Buffer[] = [];
  for (const stream of streams) {
    const decoder = new FrameDecoder(16 * 1024 * 1024);
    let first = true;
    decoder.push(Buffer.concat(stream), (body) => {
      // The handshake has no request header; after it, pings come and go with the clock.
      if (!first && body.readInt32BE(4) === OpCode.ping) return;
      first = false;
      const length = Buffer.alloc(4);
      length.writeInt32BE(body.length);
      frames.push(Buffer.concat([length, body]));
    });
  }
  if (frames.length !== JAVA_SEQUENCE.length) throw new Error(`captured ${frames.length} frames, expected ${JAVA_SEQUENCE.length}`);
  const fixture = frames.map((frame, i) => {
    const [name, op] = JAVA_SEQUENCE[i];
    if (op !== 'connect' && frame.readInt32BE(8) !== op) throw new Error(`frame ${i} (${name}) has opcode ${frame.readInt32BE(8)}, expected ${op}`);
    return { name, hex: frame.toString('hex') };
  });
  const out = join(__dirname, 'javaClient.json');
  writeFileSync(
    out,
    `${JSON.stringify({ capturedFrom: `ZooKeeper Java client (${install.source}: ${install.classpath.split(delimiter)[0]})`, regenerate: 'node -r ts-node/register/transpile-only test/protocol/captureJavaClient.ts', frames: fixture }, null, 2)}\n`,
  );
  console.log(`wrote ${fixture.length} frames to ${out}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
