/**
 * What zk-recipes allocates per acquisition in the contended loop of the bench (8 sessions, one
 * server), from V8's sampling heap profiler: every object allocated over a run, those the garbage
 * collector took since included. Unlike CPU time, the figure barely moves with the machine's load,
 * so it shows changes of a few percent that a CPU ratio cannot. Made for comparing commits: run it
 * in a checkout of each, one after another.
 *
 *   node -r ts-node/register/transpile-only bench/allocAB.ts [--rounds 4] [--ms 2000] [--sites 0] [--connect host:port]
 *
 * Prints kB per acquisition for each round and their median; with `--sites N`, the N call sites
 * that allocate most (the allocating function and its caller), in kB per acquisition.
 */
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { external, startStandalone } from './deployment';
import { ZkRecipesPeer } from './peers/zkRecipes';
import { fmt, median } from './stats';
import { runToExit } from './script';

const SESSION_TIMEOUT_MS = 30_000;
const SESSIONS = 8;
/** Bytes between samples: small enough to see sites of a few hundred bytes per acquisition. */
const SAMPLING_INTERVAL = 256;

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

function frameName(node: SamplingNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
}

/** Bytes allocated under `node`, and by site (the allocating frame and its caller) into `sites`. */
function walk(node: SamplingNode, caller: string, sites: Map<string, number>): number {
  const here = frameName(node);
  if (node.selfSize > 0) sites.set(`${here} < ${caller}`, (sites.get(`${here} < ${caller}`) ?? 0) + node.selfSize);
  return node.children.reduce((sum, child) => sum + walk(child, here, sites), node.selfSize);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '4' },
      ms: { type: 'string', default: '2000' },
      sites: { type: 'string', default: '0' },
      connect: { type: 'string' },
    },
  });
  const deployment = values.connect ? external(values.connect) : await startStandalone();
  const peer = new ZkRecipesPeer(deployment.spread, SESSION_TIMEOUT_MS, {});
  const inspector = new Session();
  inspector.connect();
  const root = `/allocAB-${Date.now()}`;
  try {
    await peer.open(SESSIONS);
    // Warm-up: the code compiled and optimized, as in the bench's own contended rounds.
    await peer.contended(`${root}/warm`, 4_000);
    const perAcquisition: number[] = [];
    const sites = new Map<string, number>();
    let acquisitions = 0;
    for (let round = 0; round < Number(values.rounds); round++) {
      await inspector.post('HeapProfiler.startSampling', {
        samplingInterval: SAMPLING_INTERVAL,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
      const run = await peer.contended(`${root}/c-${round}`, Number(values.ms));
      const { profile } = await inspector.post('HeapProfiler.stopSampling');
      const count = run.counts.reduce((a, b) => a + b, 0);
      perAcquisition.push(walk(profile.head as SamplingNode, '(root)', sites) / count / 1024);
      acquisitions += count;
    }
    console.log(`contended, ${SESSIONS} sessions: kB allocated per acquisition ${perAcquisition.map((kb) => fmt(kb, 1)).join(', ')}; median ${fmt(median(perAcquisition), 1)}`);
    const top = [...sites].sort((a, b) => b[1] - a[1]).slice(0, Number(values.sites));
    for (const [site, bytes] of top) console.log(`${fmt(bytes / acquisitions / 1024, 2).padStart(6)}  ${site}`);
  } finally {
    inspector.disconnect();
    await peer.closeSessions().catch(() => undefined);
    await deployment.close();
  }
}

runToExit(main);
