import type { ChildData, CuratorCache, CuratorCacheEvent } from '../../../recipes/cache';
import { isZkError, type ZkClient } from '../../../src';
import { timing } from '../../helpers';

/** The tree under `root` as a map of path to data (UTF-8), read with plain reads. */
export async function treeOf(client: ZkClient, root: string): Promise<Map<string, string>> {
  const tree = new Map<string, string>();
  const walk = async (path: string): Promise<void> => {
    let node;
    try {
      node = await client.getData(path);
    } catch (err) {
      if (isZkError(err, 'NONODE')) return;
      throw err;
    }
    tree.set(path, node.data.toString());
    let children: string[] = [];
    try {
      children = await client.getChildren(path);
    } catch (err) {
      if (!isZkError(err, 'NONODE')) throw err;
    }
    await Promise.all(children.map((c) => walk(`${path}/${c}`)));
  };
  await walk(root);
  return tree;
}

/** A cache's contents as a map of path to data (UTF-8). */
export function contentsOf(cache: CuratorCache): Map<string, string> {
  return new Map([...cache.nodes()].map((n) => [n.path, n.data?.toString() ?? '']));
}

/**
 * Applies a cache's listener events to a map, as Curator's consistency test does, and records
 * every inconsistency: a `created` for a node held, a `changed` whose previous node is not the
 * one held, a `deleted` for a node not held.
 */
export class EventMirror {
  readonly nodes = new Map<string, ChildData>();
  readonly errors: string[] = [];
  readonly counts = { created: 0, changed: 0, deleted: 0, initialized: 0 };

  attach(cache: CuratorCache): this {
    cache.on('created', (node) => this.apply({ type: 'created', node }));
    cache.on('changed', (node, previous) => this.apply({ type: 'changed', node, previous }));
    cache.on('deleted', (previous) => this.apply({ type: 'deleted', previous }));
    cache.on('initialized', () => this.apply({ type: 'initialized' }));
    return this;
  }

  apply(event: CuratorCacheEvent): void {
    this.counts[event.type]++;
    if (event.type === 'created') {
      if (this.nodes.has(event.node.path)) this.errors.push(`created for a node held: ${event.node.path}`);
      this.nodes.set(event.node.path, event.node);
    } else if (event.type === 'changed') {
      if (this.nodes.get(event.node.path) !== event.previous) this.errors.push(`changed with a previous node not held: ${event.node.path}`);
      this.nodes.set(event.node.path, event.node);
    } else if (event.type === 'deleted') {
      if (this.nodes.get(event.previous.path) !== event.previous) this.errors.push(`deleted for a node not held: ${event.previous.path}`);
      this.nodes.delete(event.previous.path);
    }
  }

  contents(): Map<string, string> {
    return new Map([...this.nodes.values()].map((n) => [n.path, n.data?.toString() ?? '']));
  }
}

/** Waits until the cache holds exactly `expected`, watching its events; rejects after `timeoutMs` with the differences. */
export async function cacheMatches(cache: CuratorCache, expected: Map<string, string>, timeoutMs = timing(30_000)): Promise<void> {
  const same = () => {
    const actual = contentsOf(cache);
    if (actual.size !== expected.size) return false;
    for (const [path, data] of expected) if (actual.get(path) !== data) return false;
    return true;
  };
  if (same()) return;
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (!same()) return;
      done();
      resolve();
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`the cache does not match the tree after ${timeoutMs} ms: ${describeDifference(contentsOf(cache), expected)}`));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      cache.off('created', check).off('changed', check).off('deleted', check);
    };
    cache.on('created', check).on('changed', check).on('deleted', check);
  });
}

/** The first few differences between two maps, for error messages. */
export function describeDifference(actual: Map<string, string>, expected: Map<string, string>): string {
  const out: string[] = [];
  for (const [path, data] of expected) {
    if (!actual.has(path)) out.push(`missing ${path}`);
    else if (actual.get(path) !== data) out.push(`${path}: ${JSON.stringify(actual.get(path))} instead of ${JSON.stringify(data)}`);
  }
  for (const path of actual.keys()) if (!expected.has(path)) out.push(`extra ${path}`);
  return `${out.length} differences${out.length ? `: ${out.slice(0, 8).join('; ')}` : ''}`;
}
