/**
 * The safe mode of a transaction's commit: a marker node created in the same multi proves, after a
 * lost reply, whether the multi went in, so that it is applied at most once and the caller told.
 */
import { randomUUID } from 'node:crypto';
import debug from 'debug';
import { UnsupportedError, serverError } from '../errors';
import { isRetryableError } from '../retry';
import { joinPath, parentOf } from '../paths';
import type { Op, OpResult, Stat, Transport } from '../transport/Transport';
import { abortReason, raceAbort } from '../util/async';
import type { AclForPath } from './acls';
import type { BackgroundDeletes } from './BackgroundDeletes';
import type { Namespace } from './Namespace';
import { mkdirs } from './nodeOps';
import type { RetryLoop } from './RetryLoop';
import type { Session } from './Session';
import { TransactionOutcomeUnknownError, toTransactionResult, wireOps, type TransactionOp } from './Transaction';

const log = debug('zk-recipes:client:transaction');

/** How many times a commit creates a missing marker parent and sends again (a container may be reaped in between). */
const PARENT_ROUNDS = 3;

/** A sequential create's suffix: ten digits. */
const SEQUENCE = /^\d{10}$/;

/** Where one safe commit stands. */
interface State {
  /** The session the multi was sent in: the marker, EPHEMERAL, lives as long as it does. */
  session: Session | undefined;
  /** Sent, and no reply yet: it may have gone in. */
  inDoubt: boolean;
  /** The marker's stat once found: the multi went in, at its czxid. Nothing is sent again. */
  applied: Stat | undefined;
  /** The caller has its answer: an attempt still running sends nothing more. */
  answered: boolean;
  /** The marker's delete has been sent (or handed to the background deletes). */
  dropped: boolean;
}

/**
 * Runs a transaction's operations with multi plus the create of an EPHEMERAL marker under
 * `markerParent`, retried as every operation is, but never sent again while it may have gone in:
 * the marker is looked for first (after a sync, so that a server behind the leader cannot hide it).
 * Resolves with the operations' results (the marker's dropped), proven; rejects with
 * TransactionOutcomeUnknownError when it went in but its results cannot all be read back, or when
 * nobody can tell; a refused multi resolves with its error results, as `commitTransaction` does.
 *
 * The marker is deleted once it has done its job, or once nobody can use it (the caller told the
 * outcome is unknown): in the background, in its session, when a connection problem gets in the
 * way. It never outlives that session, but it must not stand for as long as the session does.
 */
export async function commitWithMarker(
  ctx: { retry: RetryLoop; namespace: Namespace; aclFor: AclForPath; background: BackgroundDeletes },
  ops: readonly TransactionOp[],
  markerParent: string,
  signal: AbortSignal | undefined,
  session?: Session,
): Promise<OpResult[]> {
  const { retry, namespace, aclFor, background } = ctx;
  const full = wireOps(ops, namespace, aclFor);
  const parent = namespace.full(markerParent);
  const marker = joinPath(parent, `txn-${randomUUID()}`);
  const markerOp: Op = { type: 'create', path: marker, data: Buffer.alloc(0), mode: 'EPHEMERAL', acl: aclFor(marker) };
  const state: State = { session: undefined, inDoubt: false, applied: undefined, answered: false, dropped: false };
  /** Deletes the marker now; a connection problem hands it to the background deletes, in the marker's session. */
  const dropMarker = (t: Transport) => {
    state.dropped = true;
    void t.delete(marker, -1).catch((err: unknown) => {
      if (isRetryableError(err)) background.delete(marker, -1, false, state.session);
      else log('deleting the marker %s: %s', marker, (err as Error).message);
    });
  };
  const relative = (results: readonly OpResult[]) => results.map((r) => (r.type === 'create' ? { ...r, path: namespace.relative(r.path) } : r));

  const attempt = async (t: Transport, live: Session): Promise<OpResult[]> => {
    if (!t.multi || !t.aclOnCreate) throw new UnsupportedError('transactions need multi, which the native transport does not have: use the protocol transport');
    if (state.applied !== undefined) return recover(t, state.applied);
    if (state.inDoubt) {
      // The marker is EPHEMERAL: in another session it is gone whether the multi went in or not.
      if (live !== state.session) throw unknown(state, ops, state.session?.endReason, `the session ended before the transaction at ${ops[0].path} could be checked`);
      await t.sync(parent);
      const found = await t.exists(marker);
      if (found !== null) return recover(t, found);
      log('marker %s absent: the transaction at %s did not go in; sending it again', marker, ops[0].path);
      state.inDoubt = false;
    }
    for (let round = 1; ; round++) {
      if (signal?.aborted) throw abortReason(signal);
      if (state.answered) throw new UnsupportedError('the commit has been answered already');
      state.session = live;
      state.inDoubt = true;
      const results = await t.multi([...full, markerOp]);
      state.inDoubt = false;
      const own = results.slice(0, full.length);
      const mark = results[full.length];
      if (mark === undefined || mark.type !== 'error') {
        dropMarker(t);
        return own;
      }
      // Refused, so nothing of it happened. Before the marker, another operation failed: the caller's error.
      if (own.some((r) => r.type === 'error' && r.code !== 'OK')) return own;
      if (mark.code === 'NODEEXISTS') {
        // An earlier send went in after all (the check had not seen it): this one is refused.
        const found = await t.exists(marker);
        if (found !== null) return recover(t, found);
      }
      if (mark.code !== 'NONODE' || round >= PARENT_ROUNDS) {
        throw serverError(mark.rc, { path: marker, message: `the transaction's marker ${marker} could not be created (${mark.code}); nothing of the transaction happened` });
      }
      await mkdirs(t, parent, 'CONTAINER', aclFor);
    }
  };

  /** The marker is there, made by the multi: every result that can be read back, by the multi's zxid. */
  const recover = async (t: Transport, found: Stat): Promise<OpResult[]> => {
    state.applied = found;
    state.inDoubt = false;
    const zxid = found.czxid;
    const results: (OpResult | undefined)[] = [];
    for (const op of full) results.push(await readBack(t, op, zxid));
    dropMarker(t);
    if (results.every((r) => r !== undefined)) {
      log('the transaction at %s went in (marker %s); its reply was lost', ops[0].path, marker);
      return results as OpResult[];
    }
    const known = results.map((r, i) => (r === undefined || r.type === 'error' ? undefined : toTransactionResult(ops[i].path, relative([r])[0] as Exclude<OpResult, { type: 'error' }>)));
    throw new TransactionOutcomeUnknownError(true, known, `the transaction at ${ops[0].path} went in, but not all of its results can be read back`, { path: ops[0].path });
  };

  try {
    await namespace.ensure(signal);
    const results = await raceAbort(
      retry.run({ operation: 'multi', path: ops[0].path, signal, session }, (t, _attempt, live) => attempt(t, live)),
      signal,
    );
    state.answered = true;
    return relative(results);
  } catch (err) {
    state.answered = true;
    // Sent, and the caller is not told it went in and was cleaned up: the marker may stand, and
    // nobody will look for it again.
    if (state.session !== undefined && !state.dropped && (state.inDoubt || state.applied !== undefined)) background.delete(marker, -1, false, state.session);
    if (err instanceof TransactionOutcomeUnknownError) throw err;
    if (state.applied !== undefined) {
      throw new TransactionOutcomeUnknownError(true, ops.map(() => undefined), `the transaction at ${ops[0].path} went in, but its results could not be read back: ${(err as Error).message}`, {
        path: ops[0].path,
        cause: err,
      });
    }
    if (!state.inDoubt) throw err;
    throw unknown(state, ops, err, `cannot tell whether the transaction at ${ops[0].path} went in: ${(err as Error).message}`);
  }
}

/** What nobody can tell: marks the commit answered so that no attempt still running sends it again. */
function unknown(state: State, ops: readonly TransactionOp[], cause: unknown, message: string): TransactionOutcomeUnknownError {
  state.answered = true;
  return new TransactionOutcomeUnknownError(undefined, ops.map(() => undefined), message, { path: ops[0].path, ...(cause === undefined ? {} : { cause }) });
}

/**
 * One operation's result, read back after its multi went in at `zxid`; undefined when it cannot be
 * proven. A delete and a check have nothing to read; a create's node was made at `zxid`; a
 * setData's stat is the node's if nothing has written it since.
 */
async function readBack(t: Transport, op: Op, zxid: bigint): Promise<OpResult | undefined> {
  switch (op.type) {
    case 'delete':
    case 'check':
      return { type: op.type };
    case 'setData': {
      const stat = await t.exists(op.path);
      return stat !== null && stat.mzxid === zxid ? { type: 'setData', stat } : undefined;
    }
    case 'create': {
      if (!op.mode.includes('SEQUENTIAL')) return { type: 'create', path: op.path };
      const path = await findSequential(t, op.path, zxid);
      return path === undefined ? undefined : { type: 'create', path };
    }
  }
}

/**
 * The node a sequential create of `prefix` made at `zxid`, if it is still there. Sequence numbers
 * under one parent grow with zxids, so the look goes from the highest down and stops below `zxid`.
 */
async function findSequential(t: Transport, prefix: string, zxid: bigint): Promise<string | undefined> {
  const parent = parentOf(prefix);
  const base = prefix.slice(prefix.lastIndexOf('/') + 1);
  const { children } = await t.getChildren(parent);
  const candidates = children.filter((name) => name.startsWith(base) && SEQUENCE.test(name.slice(base.length))).sort().reverse();
  for (const name of candidates) {
    const path = joinPath(parent, name);
    const stat = await t.exists(path);
    if (stat === null || stat.czxid > zxid) continue;
    return stat.czxid === zxid ? path : undefined;
  }
  return undefined;
}
