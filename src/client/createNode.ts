import { randomUUID } from 'node:crypto';
import { isZkError } from '../errors';
import { isRetryableError } from '../retry';
import { OPEN_ACL, type ACL, type CreateMode, type Stat, type Transport } from '../transport/Transport';
import { raceAbort } from '../util/async';
import type { AclForPath } from './acls';
import type { BackgroundDeletes } from './BackgroundDeletes';
import type { Namespace } from './Namespace';
import { mkdirs } from './nodeOps';
import { findProtectedNode, protectedName } from './protection';
import type { RetryLoop } from './RetryLoop';
import type { Session } from './Session';

/**
 * How many times a create with `createParents` makes the parents again after NONODE: the server
 * reaps an empty container parent every so often, and a busy lock path can be emptied and reaped
 * between our parents and our create more than once.
 */
const MAX_PARENT_TRIES = 10;

/** A create, checked and resolved: what `createNode` runs. */
export interface CreateRequest {
  /** As the user gave it, relative to the namespace. */
  readonly path: string;
  readonly data: Buffer;
  readonly mode: CreateMode;
  readonly ttlMs: number | undefined;
  readonly createParents: 'container' | 'persistent' | undefined;
  readonly protected: boolean;
  /** List the parent in the same round trip. */
  readonly listParent: boolean;
  readonly signal: AbortSignal | undefined;
}

/** What a create resolves to inside the client. */
export interface CreatedNode {
  /** The new node's path, relative to the namespace. */
  readonly path: string;
  /** The session the node was created in: for an ephemeral node, its owner. */
  readonly session: Session;
  /** The new node's stat, where the transport returns it with the create (create2). */
  readonly stat?: Stat;
  /** With `listParent`: the parent's children right after the create (unsorted, with the new node), and its stat. */
  readonly children?: string[];
  readonly parentStat?: Stat;
}

/** The client parts a create needs. */
export interface CreateContext {
  readonly retry: RetryLoop;
  readonly namespace: Namespace;
  readonly background: BackgroundDeletes;
  readonly aclFor: AclForPath;
}

/**
 * Creates a node as Curator does. With protection, a create whose reply was lost is found again by
 * its `_c_<uuid>-` prefix; an ephemeral node found that way that belongs to another session is
 * deleted and created anew (CURATOR-498). If retries run out, a node the lost create may have made
 * is found and deleted in the background. On abort, a node created after all is deleted.
 *
 * The node and the parents it makes get `aclFor(path)` in their create requests; on a transport
 * whose create cannot carry an ACL (`aclOnCreate` false), by a setACL after the create.
 */
export function createNode(ctx: CreateContext, req: CreateRequest): Promise<CreatedNode> {
  try {
    return createNodeNow(ctx, req);
  } catch (err) {
    // A throwing ACL provider, say: a rejection, as from every other step.
    return Promise.reject(err);
  }
}

/**
 * `createNode`'s work. Its first attempt runs with no async function of its own (the create, and
 * the listing behind it, then one reaction each); the rare paths (a retried protected create,
 * parents made again, an ACL set after the create) are async.
 */
function createNodeNow(ctx: CreateContext, req: CreateRequest): Promise<CreatedNode> {
  const { retry, namespace, background } = ctx;
  const full = namespace.full(req.path);
  // Split by hand: a sequential path may end in '/', leaving the name to the server's counter.
  const slash = full.lastIndexOf('/');
  const parent = slash === 0 ? '/' : full.slice(0, slash);
  const protectedId = req.protected ? randomUUID() : undefined;
  // The protected name is a UUID and a prefix before a name of a path already checked: no check again.
  const target = protectedId ? `${slash === 0 ? '' : parent}/${protectedName(protectedId, full.slice(slash + 1))}` : full;
  const ephemeral = req.mode.startsWith('EPHEMERAL');
  const parentMode = req.createParents === 'container' ? 'CONTAINER' : 'PERSISTENT';
  // Looked up by the path asked for (protected name included, sequence not yet known), as Curator does.
  const acl = ctx.aclFor(target);

  const listing = (t: Transport) => (req.listParent ? t.getChildren(parent) : undefined);

  const send = (t: Transport): [Promise<{ path: string; stat: Stat | undefined }>, ReturnType<typeof listing>] => [
    t.create2 ? t.create2(target, req.data, req.mode, acl, req.ttlMs) : t.create(target, req.data, req.mode, acl, req.ttlMs).then((path) => ({ path, stat: undefined })),
    // Sent right behind the create, in the same write: ZooKeeper runs one session's requests in
    // order, so the listing already holds the new node. Its failure follows the create's.
    listing(t),
  ];
  /** The create (and the listing), once; a failure goes to `failed` when given, in the same reaction. */
  const createOnce = (t: Transport, session: Session, failed: ((err: unknown) => Promise<Created>) | undefined): Promise<Created> => {
    const [created, listed] = req.listParent && t.batch ? t.batch(() => send(t)) : send(t);
    const aclSet = t.aclOnCreate;
    if (listed === undefined) return created.then(({ path, stat }) => createdOf(path, stat, session, aclSet, undefined), failed);
    return bothAnswered(created, listed, ({ path, stat }, parentListing) => createdOf(path, stat, session, aclSet, parentListing), failed);
  };
  /** `createOnce`, making the parents again after NONODE when asked to: a container parent can be reaped between our mkdirs and our create. */
  const createWithParents = (t: Transport, session: Session, parentsTries: number): Promise<Created> =>
    createOnce(
      t,
      session,
      req.createParents === undefined
        ? undefined
        : async (err: unknown) => {
            if (!isZkError(err, 'NONODE') || parentsTries >= MAX_PARENT_TRIES) throw err;
            await mkdirs(t, parent, parentMode, ctx.aclFor);
            return createWithParents(t, session, parentsTries + 1);
          },
    );
  /** A retried protected create: the node the lost reply's create may have made is looked for first. */
  const recover = async (t: Transport, session: Session): Promise<Created> => {
    const found = await findProtectedNode(t, parent, protectedId as string, ephemeral, (stale) => background.delete(stale));
    if (!found) return createWithParents(t, session, 0);
    return createdOf(found, undefined, session, t.aclOnCreate, await listing(t));
  };

  const attempt = retry.run({ operation: 'create', path: req.path, signal: req.signal }, (t, n, session) =>
    protectedId && n > 0 ? recover(t, session) : createWithParents(t, session, 0),
  );
  return raceAbort(attempt, req.signal, (late) => {
    // An ephemeral node is deleted in its own session only: in a later one the path may hold another's.
    if (late.status === 'fulfilled') background.delete(late.value.path, -1, false, ephemeral ? late.value.session : undefined);
    else if (protectedId && isRetryableError(late.reason)) background.deleteProtected(parent, protectedId, ephemeral);
  }).then(
    (created) => (created.aclSet || acl === OPEN_ACL ? relative(namespace, created) : setAclAfter(ctx, req, created, acl, ephemeral)),
    (err: unknown) => {
      if (protectedId && isRetryableError(err)) background.deleteProtected(parent, protectedId, ephemeral);
      throw err;
    },
  );
}

/**
 * Sets the ACL of a node the transport created open (the native binding). An ephemeral node goes
 * with its session: its ACL is set in that session or not at all (in the next, the path is gone
 * or, worse, another session's node).
 */
async function setAclAfter(ctx: CreateContext, req: CreateRequest, created: Created, acl: readonly ACL[], ephemeral: boolean): Promise<CreatedNode> {
  const session = ephemeral ? created.session : undefined;
  await ctx.retry.run({ operation: 'setACL', path: req.path, signal: req.signal, session }, (t) => t.setACL(created.path, acl, -1)).catch((err: unknown) => {
    // The caller hears the create failed: an open node it does not know of must not stay.
    ctx.background.delete(created.path, -1, false, ephemeral ? created.session : undefined);
    throw err;
  });
  return relative(ctx.namespace, created);
}

/**
 * `combine` of a create's answer and the listing's sent behind it, once both have come: one
 * reaction on each, and no promise returned from a reaction, which would cost the caller two
 * more turns of the microtask queue. The first failure alone counts (the create's, when both
 * fail, as its answer comes first): it rejects, or goes to `failed` when given.
 */
function bothAnswered<A, B, T>(a: Promise<A>, b: Promise<B>, combine: (a: A, b: B) => T, failed: ((err: unknown) => Promise<T>) | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let left = 2;
    let first: A;
    let second: B;
    const answered = () => {
      if (--left !== 0) return;
      try {
        resolve(combine(first, second));
      } catch (err) {
        reject(err);
      }
    };
    const fail = (err: unknown) => {
      if (left < 0) return;
      left = -1;
      if (failed === undefined) reject(err);
      else resolve(failed(err));
    };
    a.then((value) => {
      first = value;
      answered();
    }, fail);
    b.then((value) => {
      second = value;
      answered();
    }, fail);
  });
}

/** A create done, with the parent's listing when one was asked for. */
function createdOf(path: string, stat: Stat | undefined, session: Session, aclSet: boolean, parentListing: { children: string[]; stat: Stat } | undefined): Created {
  return { path, stat, session, aclSet, children: parentListing?.children, parentStat: parentListing?.stat };
}

/** What the caller hears of a create done: its path relative to the namespace again. */
function relative(namespace: Namespace, created: Created): CreatedNode {
  return { path: namespace.relative(created.path), session: created.session, stat: created.stat, children: created.children, parentStat: created.parentStat };
}

/** A create done, before its path is made relative again; `aclSet`: whether the create carried the ACL. */
interface Created {
  readonly path: string;
  readonly session: Session;
  readonly stat: Stat | undefined;
  readonly aclSet: boolean;
  readonly children: string[] | undefined;
  readonly parentStat: Stat | undefined;
}
