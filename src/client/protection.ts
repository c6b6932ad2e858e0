import { isZkError } from '../errors';
import { joinPath } from '../paths';
import type { Transport } from '../transport/Transport';

/** Curator's protected-name prefix: `_c_` + a UUID + `-`, before the node's own name. */
export const PROTECTED_PREFIX = '_c_';
const UUID_LENGTH = 36;

/** `_c_<uuid>-<name>`, the name Curator gives a protected node. */
export function protectedName(uuid: string, name: string): string {
  return `${PROTECTED_PREFIX}${uuid}-${name}`;
}

/** Whether a node name carries Curator's protection prefix. */
export function isProtectedName(name: string): boolean {
  return name.startsWith(PROTECTED_PREFIX) && name.length > PROTECTED_PREFIX.length + UUID_LENGTH && name[PROTECTED_PREFIX.length + UUID_LENGTH] === '-';
}

/** A node name without its protection prefix (the name itself when it has none). */
export function stripProtection(name: string): string {
  return isProtectedName(name) ? name.slice(PROTECTED_PREFIX.length + UUID_LENGTH + 1) : name;
}

/**
 * Looks under `parent` for the node a protected create with `uuid` made. For ephemeral modes, a
 * node whose owner is not this transport's session is not ours (CURATOR-498: a follower can still
 * list the node of a session the leader is expiring); it is handed to `discard` and not returned.
 */
export async function findProtectedNode(
  t: Transport,
  parent: string,
  uuid: string,
  ephemeral: boolean,
  discard: (path: string) => void,
): Promise<string | undefined> {
  let children: string[];
  try {
    children = (await t.getChildren(parent)).children;
  } catch (err) {
    if (isZkError(err, 'NONODE')) return undefined;
    throw err;
  }
  const prefix = `${PROTECTED_PREFIX}${uuid}-`;
  const name = children.find((c) => c.startsWith(prefix));
  if (name === undefined) return undefined;
  const path = joinPath(parent, name);
  if (!ephemeral) return path;
  const stat = await t.exists(path);
  if (stat === null) return undefined;
  if (stat.ephemeralOwner === t.sessionId) return path;
  discard(path);
  return undefined;
}
