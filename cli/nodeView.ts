import type { NodeInfo } from './NodeReader';
import { ageOf, dataText, durationText, ownerOf, showData, type ShownData } from './format';

/** One recipe node as the commands report it (and print it with --json). */
export interface NodeView {
  /** The node's name; under a semaphore, relative to the semaphore's path (`leases/_c_…`). */
  readonly name: string;
  readonly path: string;
  /** The owning session as 0x hex; null for a node no session owns (queue items). */
  readonly session: string | null;
  /** When the node was created, by the server's clock (ISO 8601). */
  readonly created: string;
  /** How long ago that was, by this machine's clock. */
  readonly ageMs: number;
  /** The node's data as shown; null when it was not read. */
  readonly data: ShownData | null;
}

/** The view of a node read at `nowMs`. */
export function nodeView(info: NodeInfo, nowMs: number, name = info.name): NodeView {
  return {
    name,
    path: info.path,
    session: ownerOf(info.stat.ephemeralOwner),
    created: new Date(info.stat.ctime).toISOString(),
    ageMs: ageOf(info.stat.ctime, nowMs),
    data: info.data === undefined ? null : showData(info.data),
  };
}

/** The columns of a node in a table: name, session, age, data; `laterMs` after it was read (a live view ages it). */
export function nodeCells(node: NodeView, laterMs = 0): string[] {
  return [node.name, node.session ?? '-', durationText(node.ageMs + laterMs), node.data === null ? '' : dataText(node.data)];
}
