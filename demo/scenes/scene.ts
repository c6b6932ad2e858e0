import type { ZkClient } from '../../src';
import type { Printer } from '../view';
import type { Worker } from '../workers';

/** What every scene gets. */
export interface SceneContext {
  readonly printer: Printer;
  /** The demo's own client, to set up paths and to watch the recipes' nodes. */
  readonly client: ZkClient;
  /** Every path of this run is under it. */
  readonly root: string;
  /** Workers by name (w1…w7). */
  readonly workers: ReadonlyMap<string, Worker>;
  /** Short timings, for CI. */
  readonly quick: boolean;
  /** The bound on any one wait of a scene. */
  readonly waitMs: number;
  /** Aborted on Ctrl-C. */
  readonly signal: AbortSignal;
}

/** What a scene found, for the summary. */
export interface SceneResult {
  readonly title: string;
  /** Whether every check held. */
  readonly ok: boolean;
  /** One line of facts. */
  readonly summary: string;
}

/** The workers a scene uses, by name. */
export function pick(ctx: SceneContext, names: readonly string[]): Worker[] {
  return names.map((name) => {
    const worker = ctx.workers.get(name);
    if (!worker) throw new Error(`no worker ${name}`);
    return worker;
  });
}
