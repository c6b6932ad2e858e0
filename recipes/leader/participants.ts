import { isZkError, joinPath, type ZkClient } from '../../src/recipeKit';
import { sortLockNodes } from '../locks/sequence';

/** One participant of an election, as Curator's Participant: its id (its node's data as UTF-8) and whether it leads. */
export interface Participant {
  readonly id: string;
  readonly isLeader: boolean;
}

/** What `getLeader()` answers when nobody takes part: an empty id that does not lead (Curator's dummy Participant). */
export const NO_LEADER: Participant = Object.freeze({ id: '', isLeader: false });

/** The node name LeaderLatch creates after its protection prefix: `_c_<uuid>-latch-NNNNNNNNNN`. */
export const LEADER_LATCH_NAME = 'latch-';
/** The node name LeaderSelector's mutex creates after its protection prefix: `_c_<uuid>-lock-NNNNNNNNNN`. */
export const LEADER_SELECTOR_NAME = 'lock-';

/** The lifecycle of a participant: it starts once and closes once. */
export type Lifecycle = 'LATENT' | 'STARTED' | 'CLOSED';

/** A step that failed is tried again after this long at first; the wait doubles up to RETRY_MAX_MS. */
export const RETRY_FIRST_MS = 100;
export const RETRY_MAX_MS = 5_000;

/** The wait after `delayMs` in the doubling series. */
export function nextRetryDelay(delayMs: number): number {
  return Math.min(delayMs * 2, RETRY_MAX_MS);
}

/**
 * Checks before any I/O that a participant's node, with `id` as its data, can be created under
 * `path`: an id that does not fit would make the participant never join.
 */
export function validateParticipantId(client: ZkClient, path: string, name: string, id: string): void {
  client.validateCreate(joinPath(path, name), { data: id === '' ? undefined : id, mode: 'EPHEMERAL_SEQUENTIAL', protected: true });
}

/** A node's data as an id; undefined when the node is gone. */
async function readId(client: ZkClient, node: string): Promise<string | undefined> {
  try {
    return (await client.getData(node)).data.toString('utf8');
  } catch (err) {
    if (isZkError(err, 'NONODE')) return undefined;
    throw err;
  }
}

/**
 * The participants behind `nodes` (full paths, in election order). A node that went while we read
 * is skipped; the first one still there leads, as in Curator.
 */
export async function readParticipants(client: ZkClient, nodes: readonly string[]): Promise<Participant[]> {
  const ids = await Promise.all(nodes.map((node) => readId(client, node)));
  const participants: Participant[] = [];
  for (const id of ids) {
    if (id !== undefined) participants.push({ id, isLeader: participants.length === 0 });
  }
  return participants;
}

/** The leader among `nodes` (full paths, in election order): the first node still there; NO_LEADER when none is. */
export async function readLeader(client: ZkClient, nodes: readonly string[]): Promise<Participant> {
  for (const node of nodes) {
    const id = await readId(client, node);
    if (id !== undefined) return { id, isLeader: true };
  }
  return NO_LEADER;
}

/** The nodes of an election under `path`, sorted by `name`'s sequence, as full paths; none when the path is gone. */
export async function participantNodes(client: ZkClient, path: string, name: string): Promise<string[]> {
  let children: string[];
  try {
    children = await client.getChildren(path);
  } catch (err) {
    if (isZkError(err, 'NONODE')) return [];
    throw err;
  }
  return sortLockNodes(children, [name]).map((c) => joinPath(path, c));
}
