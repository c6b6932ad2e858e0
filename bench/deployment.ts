/**
 * What the bench runs against, and where every library's sessions connect:
 *
 * - by default, one standalone `TestingServer` (full JIT, forceSync off);
 * - with `--ensemble N`, a `TestingCluster` of N members with the same settings, the production
 *   shape: clients spread over the members, writes forwarded through the leader;
 * - with `--connect`, a server (or ensemble) of the caller's, every session on its whole string.
 *
 * The spread is a list of connect strings, session i of every library connecting to entry
 * i mod length (see `connectStringOf`). On an ensemble each entry is one member, the followers
 * first in server id order and the leader last: a library's session 0, the only session of the
 * uncontended scenario, is then on a follower, as most clients of an ensemble are, and session i
 * lands on the same member for zk-recipes, the floors, Curator and kazoo. A single member per
 * session rather than the whole string rotated: the clients shuffle a connect string's servers
 * (ours, the Java client, kazoo and the binding alike), so a rotation would not decide where a
 * session goes.
 */
import { TestingCluster, TestingServer, type TestingServerOptions } from '../src/testing';
import type { Spread } from './peers/types';
import type { ServerProbe } from './server';

/** The standalone server's settings, which every ensemble member shares. */
const SERVER_OPTIONS: Omit<TestingServerOptions, 'port' | 'dataDir'> = { forceSync: false, fastStartup: false, logLevel: 'error', containerCheckIntervalMs: 60_000 };

/** The ensemble sizes `--ensemble` takes. */
export const ENSEMBLE_SIZES = { min: 3, max: 9 } as const;

export interface Deployment {
  /** Every server, comma-separated: for clients that set up or clean up, not for measured sessions. */
  readonly connectString: string;
  /** Where each session connects: session i to `spread[i % spread.length]`. */
  readonly spread: Spread;
  /** Members of the ensemble the bench started; undefined on one server or with --connect. */
  readonly ensembleSize: number | undefined;
  /** Appended to the results' headings: '' on one server, ', 3-node ensemble' on an ensemble. */
  readonly headingSuffix: string;
  /** Appended to the results' file names: '' on one server, '-ensemble3' on an ensemble. */
  readonly fileSuffix: string;
  /** Who the spread's entries are, for the per-member column: "s1 follower / s2 follower / s3 leader". */
  readonly members: string | undefined;
  /** The ZooKeeper row of the machine-and-versions table. */
  describe(zkVersion: string): string;
  /** A problem with the deployment seen at the probe's last reading (the leader moved), or undefined. */
  check(probe: ServerProbe): string | undefined;
  close(): Promise<void>;
}

const SERVER_DESCRIPTION = 'embedded TestingServer (forceSync=no, full JIT, container check 60 s)';

export async function startStandalone(): Promise<Deployment> {
  const server = await TestingServer.start(SERVER_OPTIONS);
  return {
    connectString: server.connectString,
    spread: [server.connectString],
    ensembleSize: undefined,
    headingSuffix: '',
    fileSuffix: '',
    members: undefined,
    describe: (v) => `${v}, standalone, ${SERVER_DESCRIPTION}`,
    check: () => undefined,
    close: () => server.close(),
  };
}

export function external(connectString: string): Deployment {
  return {
    connectString,
    spread: [connectString],
    ensembleSize: undefined,
    headingSuffix: '',
    fileSuffix: '',
    members: undefined,
    describe: (v) => `${v}, external (${connectString})`,
    check: () => undefined,
    close: async () => undefined,
  };
}

/** Starts an `n`-member ensemble and resolves once it has a leader, with the spread ordered followers first. */
export async function startEnsemble(n: number): Promise<Deployment> {
  const cluster = await TestingCluster.start(n, SERVER_OPTIONS);
  try {
    const leader = await cluster.waitForLeader();
    const ordered = [...cluster.members.filter((m) => m !== leader), leader];
    const members = ordered.map((m) => `s${m.serverId} ${m === leader ? 'leader' : 'follower'}`).join(' / ');
    return {
      connectString: cluster.connectString,
      spread: ordered.map((m) => m.connectString),
      ensembleSize: n,
      headingSuffix: `, ${n}-node ensemble`,
      fileSuffix: `-ensemble${n}`,
      members,
      describe: (v) =>
        `${v}, ${n}-node ensemble, ${n} embedded TestingServers in a TestingCluster (forceSync=no, full JIT, container check 60 s); leader s${leader.serverId}. Session i of every library connects to one member, entry i mod ${n} of ${members}: session 0 (the uncontended one) on a follower, every write forwarded through the leader`,
      check: (probe) => {
        const now = probe.members.map((m) => m.mode);
        return now[n - 1] === 'leader' && now.slice(0, n - 1).every((m) => m === 'follower')
          ? undefined
          : `the ensemble's roles changed during the run (now ${now.map((m, i) => `s${ordered[i].serverId} ${m ?? 'not serving'}`).join(' / ')}; at start s${leader.serverId} led): figures mix two leaders`;
      },
      close: () => cluster.close(),
    };
  } catch (err) {
    await cluster.close();
    throw err;
  }
}
