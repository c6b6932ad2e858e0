/**
 * The demo's own eyes on ZooKeeper: the CLI's views (`zk-recipes watch locks …`), read again each
 * time a ZooKeeper watch fires, and handed to the scene that shows them.
 */
import type { Command, Report } from '../src/cli/command';
import { NodeReader } from '../src/cli/NodeReader';
import { WatchSet } from '../src/cli/WatchSet';
import type { ZkClient } from '../src';

/**
 * Calls `onReport` with the view of `path` now, and again each time it changes (undefined while
 * the path is missing or holds no such recipe), until `signal` aborts. Resolves once the first
 * view has been handed over.
 */
export async function follow<R extends Report>(client: ZkClient, command: Command<R>, path: string, signal: AbortSignal, onReport: (report: R | undefined) => void): Promise<void> {
  let dirty = true;
  let reading: Promise<void> | undefined;
  let last = '';
  const watches = new WatchSet(() => kick());
  const readOnce = async (): Promise<void> => {
    let report: R | undefined;
    try {
      report = await command.read(new NodeReader(client, signal, watches), path);
    } catch {
      // Missing, or no such recipe now: a watch tells when that changes.
      report = undefined;
    }
    if (signal.aborted) return;
    const state = report ? JSON.stringify(report, (key, value: unknown) => (key === 'at' || key === 'ageMs' ? undefined : value)) : '';
    if (state === last) return;
    last = state;
    onReport(report);
  };
  const kick = (): Promise<void> => {
    dirty = true;
    reading ??= (async () => {
      while (dirty && !signal.aborted) {
        dirty = false;
        await readOnce();
      }
    })().finally(() => (reading = undefined));
    return reading;
  };
  await kick();
}
