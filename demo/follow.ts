/**
 * The demo's own eyes on ZooKeeper: the CLI's views (what `zk-recipes watch locks …` shows), read
 * again each time one of their watches sees a change, and handed to the scene that shows them.
 */
import type { Command, Report } from '../cli/command';
import { WatchedReader } from '../cli/WatchedReader';
import type { ZkClient } from '../src';
import { StepLoop } from '../src/util/StepLoop';

/**
 * Calls `onReport` with the view of `path` now, and again each time it changes (undefined while
 * the path is missing or holds no such recipe), until `signal` aborts. Resolves once the first
 * view has been handed over.
 */
export async function follow<R extends Report>(client: ZkClient, command: Command<R>, path: string, signal: AbortSignal, onReport: (report: R | undefined) => void): Promise<void> {
  let last: string | undefined;
  const loop = new StepLoop(async () => {
    let report: R | undefined;
    try {
      report = await reader.reading(signal, (r) => command.read(r, path));
    } catch {
      // Missing, or no such recipe now: a watch tells when that changes.
      report = undefined;
    }
    if (signal.aborted) return;
    const state = report ? JSON.stringify(report, (key, value: unknown) => (key === 'at' || key === 'ageMs' ? undefined : value)) : '';
    if (state === last) return;
    last = state;
    onReport(report);
  });
  const reader = new WatchedReader(client, () => loop.kick(), signal);
  signal.addEventListener('abort', () => loop.stop(), { once: true });
  loop.kick();
  await loop.idle;
}
