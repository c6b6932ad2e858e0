/**
 * Where Curator 5.4 and Java are on this machine. The interop tests' Curator peer and the
 * benchmark's Curator driver both compile and run Java against these jars.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { HarnessSetupError } from '../src/testing';

const DEBIAN_JARS = '/usr/share/java';
export const CURATOR_HINT =
  'Install Curator with `apt-get update && apt-get install -y libcurator-recipes-java libcurator-framework-java libcurator-client-java libcurator-discovery-java` ' +
  '(Debian), or set CURATOR_CLASSPATH to Curator 5.x (with curator-x-discovery), Jackson, ZooKeeper, Guava and slf4j jars.';

/** Where the Curator peer's Java tools and jars are. */
export interface CuratorInstallation {
  /** The `java` executable. */
  readonly java: string;
  /** The `javac` executable. */
  readonly javac: string;
  /** `javac -version`, part of the compile cache key. */
  readonly javacVersion: string;
  /** Curator (with curator-x-discovery and its Jackson), ZooKeeper (client), Guava, slf4j and a logging binding. */
  readonly classpath: string;
  /** 'CURATOR_CLASSPATH' or 'debian'. */
  readonly source: string;
}

function findTool(name: 'java' | 'javac', hint: string): { path: string; version: string } {
  const candidates = [process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', name) : undefined, name];
  for (const tool of candidates) {
    if (tool === undefined) continue;
    // Both print their version on stderr.
    const run = spawnSync(tool, ['-version'], { encoding: 'utf8', timeout: 30_000 });
    if (run.status === 0) return { path: tool, version: `${run.stdout}${run.stderr}`.trim() };
  }
  throw new HarnessSetupError(`${name} was not found (tried $JAVA_HOME/bin/${name} and ${name} on PATH). ${hint}`);
}

let installation: CuratorInstallation | undefined;

/**
 * Finds Java, javac and Curator's jars: `CURATOR_CLASSPATH` if set, else Debian's jars in
 * /usr/share/java (libcurator-*-java 5.4.0, whose manifests also pull in ZooKeeper's own
 * dependencies). Throws HarnessSetupError naming the packages to install when something is missing.
 */
export function locateCurator(): CuratorInstallation {
  if (installation) return installation;
  const java = findTool('java', 'Install it with `apt-get update && apt-get install -y default-jre-headless`.');
  const javac = findTool('javac', 'Install it with `apt-get update && apt-get install -y default-jdk-headless`.');
  let classpath: string;
  let source: string;
  if (process.env.CURATOR_CLASSPATH) {
    classpath = process.env.CURATOR_CLASSPATH;
    source = 'CURATOR_CLASSPATH';
  } else {
    // What Curator 5.4 loads at run time for the peer's recipes (checked with -Xlog:class+load):
    // its three jars, the ZooKeeper client (zookeeper + jute), Guava (Debian's guava.jar bundles
    // failureaccess) and slf4j. The jars' manifests also name Jackson, Netty, Jetty…, none loaded.
    // The discovery commands add curator-x-discovery and the Jackson it serializes instances with.
    const required = [
      'curator-recipes',
      'curator-framework',
      'curator-client',
      'curator-x-discovery',
      'jackson-databind',
      'jackson-core',
      'jackson-annotations',
      'zookeeper',
      'zookeeper-jute',
      'guava',
      'slf4j-api',
    ];
    const missing = required.filter((j) => !existsSync(join(DEBIAN_JARS, `${j}.jar`)));
    if (missing.length > 0) {
      throw new HarnessSetupError(`Curator's jars are missing from ${DEBIAN_JARS}: ${missing.map((j) => `${j}.jar`).join(', ')}. ${CURATOR_HINT}`);
    }
    const optional = ['failureaccess', 'slf4j-simple'].filter((j) => existsSync(join(DEBIAN_JARS, `${j}.jar`)));
    classpath = [...required, ...optional].map((j) => join(DEBIAN_JARS, `${j}.jar`)).join(delimiter);
    source = 'debian';
  }
  installation = { java: java.path, javac: javac.path, javacVersion: javac.version, classpath, source };
  return installation;
}
