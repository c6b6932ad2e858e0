/** Multi-step node operations on one transport: creating missing ancestors, deleting a subtree. */
import { isZkError } from '../errors';
import { joinPath } from '../paths';
import { OPEN_ACL, type Transport } from '../transport/Transport';
import type { AclForPath } from './acls';

/** How many times `mkdirs` starts over after an ancestor it had found went before it was done. */
const MKDIRS_ROUNDS = 5;

/**
 * Creates `path` and every missing ancestor; an existing node is fine. An ancestor that goes
 * between our finding it and our creating its child (a container the server reaped once it was
 * empty, or a delete by someone else) makes the child's create fail with NONODE: it starts over
 * from the top, a few times at most.
 *
 * Each node it creates gets `aclFor(itsPath)`, as Curator's mkdirs gives parents the provider's
 * ACL: in the create request, or by a setACL right after it on a transport that cannot
 * (`aclOnCreate` false). Every level's ACL is looked up before the first create.
 */
export async function mkdirs(t: Transport, path: string, mode: 'PERSISTENT' | 'CONTAINER', aclFor: AclForPath): Promise<void> {
  const levels: Array<{ path: string; acl: ReturnType<AclForPath> }> = [];
  let current = '';
  for (const part of path.split('/').filter(Boolean)) {
    current += `/${part}`;
    levels.push({ path: current, acl: aclFor(current) });
  }
  for (let round = 1; ; round++) {
    try {
      return await createEachLevel(t, levels, mode);
    } catch (err) {
      if (!isZkError(err, 'NONODE') || round >= MKDIRS_ROUNDS) throw err;
    }
  }
}

/** One pass from the top: creates each node on the way in turn; an existing one is fine (and keeps its ACL). */
async function createEachLevel(t: Transport, levels: ReadonlyArray<{ path: string; acl: ReturnType<AclForPath> }>, mode: 'PERSISTENT' | 'CONTAINER'): Promise<void> {
  for (const { path, acl } of levels) {
    try {
      await t.create(path, Buffer.alloc(0), mode, acl);
    } catch (err) {
      if (!isZkError(err, 'NODEEXISTS')) throw err;
      continue;
    }
    // Open until this lands (the native binding); if the connection drops first, it stays open: a
    // retry finds the node there and cannot tell it from someone else's.
    if (!t.aclOnCreate && acl !== OPEN_ACL) await t.setACL(path, acl, -1);
  }
}

/** Deletes a node, its children first when `recursive`; NONODE on a child is fine. */
export async function deleteTree(t: Transport, path: string, version: number, recursive: boolean): Promise<void> {
  for (let round = 0; ; round++) {
    if (recursive) {
      let children: string[];
      try {
        ({ children } = await t.getChildren(path));
      } catch (err) {
        // Gone since an earlier round (someone else deleted it, or the server reaped a container): done.
        if (round > 0 && isZkError(err, 'NONODE')) return;
        throw err;
      }
      for (const child of children) {
        try {
          await deleteTree(t, joinPath(path, child), -1, true);
        } catch (err) {
          if (!isZkError(err, 'NONODE')) throw err;
        }
      }
    }
    try {
      await t.delete(path, version);
      return;
    } catch (err) {
      // It stood when we listed it: someone else deleted it meanwhile (or the server reaped an emptied container).
      if (recursive && isZkError(err, 'NONODE')) return;
      // A child appeared while we deleted the others: go round again.
      if (!(recursive && isZkError(err, 'NOTEMPTY'))) throw err;
    }
  }
}
