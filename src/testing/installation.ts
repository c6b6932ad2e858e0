import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ZkError } from '../errors';

/** Where a ZooKeeper server can be started from. */
export interface ZooKeeperInstallation {
  /** Java classpath that holds ZooKeeper's server classes and a logging binding. */
  readonly classpath: string;
  /** How it was found: 'ZOOKEEPER_CLASSPATH', 'ZOOKEEPER_HOME' or 'debian'. */
  readonly source: string;
  /** The `java` executable. */
  readonly java: string;
}

const DEBIAN_JARS = '/usr/share/java';
const INSTALL_HINT =
  'Install it with `apt-get update && apt-get install -y zookeeper` (Debian), ' +
  'or set ZOOKEEPER_HOME to an unpacked ZooKeeper release, or ZOOKEEPER_CLASSPATH to its jars.';

/** The harness cannot run: ZooKeeper or Java is missing. */
export class HarnessSetupError extends ZkError {
  override name = 'HarnessSetupError';
  declare readonly code: 'HARNESS_SETUP';
  constructor(message: string) {
    super('HARNESS_SETUP', message);
  }
}

function jarsIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jar'))
    .map((f) => join(dir, f));
}

function findJava(): string {
  const candidates = [process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : undefined, 'java'];
  for (const java of candidates) {
    if (java === undefined) continue;
    try {
      execFileSync(java, ['-version'], { stdio: 'ignore', timeout: 30_000, env: process.env });
      return java;
    } catch {
      // try the next one
    }
  }
  throw new HarnessSetupError(
    'Java was not found (tried $JAVA_HOME/bin/java and java on PATH). ' +
      'Install it with `apt-get update && apt-get install -y default-jre-headless`.',
  );
}

const cache = new Map<string, ZooKeeperInstallation>();

/**
 * Finds ZooKeeper: `ZOOKEEPER_CLASSPATH` if set, else `ZOOKEEPER_HOME` (a release's `lib/` and
 * top-level jars), else Debian's jars in /usr/share/java. Throws HarnessSetupError naming the
 * install command when there is none, or when Java is missing.
 */
export function locateZooKeeper(): ZooKeeperInstallation {
  const key = [process.env.ZOOKEEPER_CLASSPATH, process.env.ZOOKEEPER_HOME, process.env.JAVA_HOME, process.env.PATH].join('|');
  const known = cache.get(key);
  if (known) return known;
  let classpath: string;
  let source: string;
  if (process.env.ZOOKEEPER_CLASSPATH) {
    classpath = process.env.ZOOKEEPER_CLASSPATH;
    source = 'ZOOKEEPER_CLASSPATH';
  } else if (process.env.ZOOKEEPER_HOME) {
    const home = process.env.ZOOKEEPER_HOME;
    const jars = [...jarsIn(join(home, 'lib')), ...jarsIn(home)];
    if (!jars.some((j) => /zookeeper-\d[^/]*\.jar$/.test(j))) {
      throw new HarnessSetupError(`ZOOKEEPER_HOME=${home} holds no zookeeper-<version>.jar. ${INSTALL_HINT}`);
    }
    classpath = jars.join(delimiter);
    source = 'ZOOKEEPER_HOME';
  } else {
    const server = join(DEBIAN_JARS, 'zookeeper.jar');
    if (!existsSync(server)) {
      throw new HarnessSetupError(`No ZooKeeper installation was found (${server} is missing). ${INSTALL_HINT}`);
    }
    // Debian's zookeeper.jar names its dependencies in its manifest; it only lacks a logging binding.
    const binding = join(DEBIAN_JARS, 'slf4j-simple.jar');
    classpath = existsSync(binding) ? [server, binding].join(delimiter) : server;
    source = 'debian';
  }
  const found = { classpath, source, java: findJava() };
  cache.set(key, found);
  return found;
}
