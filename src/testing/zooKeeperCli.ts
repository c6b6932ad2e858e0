import { locateZooKeeper } from './installation';
import { spawnGuardedJvm } from './spawnJvm';

/**
 * Runs ZooKeeper's own command-line client once (`ZooKeeperMain <args>`, as `zkCli.sh` does) and
 * resolves with what it printed, both streams, once it has exited. The harness uses it where an
 * operator would: `reconfig` of a TestingCluster.
 */
export async function runZooKeeperCli(args: readonly string[], timeoutMs = 60_000): Promise<string> {
  const install = locateZooKeeper();
  const { child } = spawnGuardedJvm({
    java: install.java,
    jvmOptions: ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-XX:-UsePerfData', '-Djava.net.preferIPv4Stack=true', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn'],
    classpath: install.classpath,
    mainClass: 'org.apache.zookeeper.ZooKeeperMain',
    args,
    stdio: 'pipe',
    name: 'zk-cli',
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stdin?.end();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ZooKeeper's CLI (${args.join(' ')}) did not end within ${timeoutMs} ms:\n${out.slice(-2000)}`));
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return out;
}
