import { InvalidArgumentError, TimeoutError, UnsupportedError, ZkError, serverError, type ServerError, type ZkErrorOptions } from '../errors';
import { joinPath, validatePath } from '../paths';
import type { CreateMode, Op, OpResult, Stat } from '../transport/Transport';
import { raceAbort } from '../util/async';
import { linkedSignal } from '../util/linkedSignal';
import { startTimer } from '../util/timers';
import { toData, validateOptions, validateSignal, validateTimeout } from '../validate';
import type { AclForPath } from './acls';
import { compressData, compressionWanted, type CompressionProvider } from './compression';
import type { Namespace } from './Namespace';
import type { RetryLoop } from './RetryLoop';
import type { Session } from './Session';
import { validateMode, validateSession, validateVersion } from './validation';

/** What one operation of a committed transaction gave. */
export type TransactionResult =
  | { readonly type: 'create'; readonly path: string; readonly stat?: Stat }
  | { readonly type: 'delete'; readonly path: string }
  | { readonly type: 'setData'; readonly path: string; readonly stat: Stat }
  | { readonly type: 'check'; readonly path: string };

/** The kinds of operation a transaction holds (the multi request's op kinds). */
export type TransactionOpType = 'create' | 'delete' | 'setData' | 'check';

/** How each operation of a failed transaction ended: 'OK' (rolled back), its own code, or 'RUNTIMEINCONSISTENCY' (not run). */
export interface TransactionOutcome {
  readonly type: TransactionOpType;
  readonly path: string;
  readonly code: string;
}

/**
 * A transaction the server refused: nothing of it happened. `failedIndex` is the operation that
 * failed and `cause` what the server said of it (a NODEEXISTS, a BADVERSION, ...), as Curator's
 * CuratorTransaction tells them; `outcomes` has every operation's code.
 */
export class TransactionError extends ZkError {
  override name = 'TransactionError';
  declare readonly code: 'TRANSACTION_FAILED';
  declare readonly cause: ServerError;

  constructor(
    readonly failedIndex: number,
    readonly outcomes: readonly TransactionOutcome[],
    cause: ServerError,
  ) {
    const failed = outcomes[failedIndex];
    super('TRANSACTION_FAILED', `the transaction failed at operation ${failedIndex} (${failed.type} ${failed.path}): ${failed.code}`, { path: failed.path, cause });
  }

  /** The failed operation's code ('NODEEXISTS', 'BADVERSION', ...). */
  get failedCode(): string {
    return this.outcomes[this.failedIndex].code;
  }
}

/**
 * A commit made with a `markerParent` whose outcome the client cannot fully prove. `applied` is
 * true when the marker shows the transaction went in, once: `results` then has every result the
 * client could read back, and undefined where it could not (a sequential create's node gone since,
 * a setData's node written again since). `applied` is undefined when nobody can tell: the session
 * that held the marker ended, or the time limit (`timeoutMs`, the signal, the retry policy) ran out
 * before the check could be made; `cause` says which. Either way the operations were applied at
 * most once, and will not be sent again.
 */
export class TransactionOutcomeUnknownError extends ZkError {
  override name = 'TransactionOutcomeUnknownError';
  declare readonly code: 'OUTCOME_UNKNOWN';

  constructor(
    /** True when the marker proves that the transaction went in (once); undefined when nobody can tell. */
    readonly applied: true | undefined,
    /** Per operation, in order: its result when it could be read back, else undefined (all undefined unless `applied`). */
    readonly results: readonly (TransactionResult | undefined)[],
    message: string,
    options: ZkErrorOptions = {},
  ) {
    super('OUTCOME_UNKNOWN', message, options);
  }
}

/** An operation as the user gives it: a create's ACL is the client's to choose, at commit. */
export type TransactionOp = Exclude<Op, { type: 'create' }> | Omit<Extract<Op, { type: 'create' }>, 'acl'>;

/** Runs a transaction's operations (paths relative to the namespace) and resolves with the server's results. */
export type CommitTransaction = (
  ops: readonly TransactionOp[],
  signal: AbortSignal | undefined,
  session: Session | undefined,
  markerParent: string | undefined,
) => Promise<OpResult[]>;

/** The name of a commit's marker node under its `markerParent`: `txn-` and a UUID. */
const MARKER_NAME_LENGTH = 'txn-'.length + 36;

/** Options of {@link Transaction.commit}. */
export interface CommitOptions {
  /** Aborts the wait; the commit rejects with `signal.reason`. */
  signal?: AbortSignal;
  /**
   * Commit only in this session: once it has ended, reject with SessionLostError instead of
   * retrying in the next one. For transactions on ephemeral nodes of that session (deleting an
   * item together with our lock node): in a later session the path may hold another's node.
   */
  session?: Session;
  /**
   * Reject after this long: with TimeoutError, or with TransactionOutcomeUnknownError once the
   * transaction may have reached the server in the safe mode (`markerParent`).
   */
  timeoutMs?: number;
  /**
   * Safe to retry: the commit adds to the multi an EPHEMERAL marker node, `<markerParent>/txn-<uuid>`
   * (the parent is created as a container when missing). When the reply is lost, the client never
   * sends the multi blindly again: once reconnected in the same session, it looks for the marker.
   * Found, the commit resolves with the results it can read back (TransactionOutcomeUnknownError with
   * `applied: true` when it cannot read them all); absent, the multi never went in and is sent again,
   * with the same marker, so that at most one of the sends can ever apply. When the session ended
   * first, or the time ran out, it rejects with TransactionOutcomeUnknownError (`applied`
   * undefined). The marker is deleted once the commit is known to have gone in, or once the
   * outcome has been reported unknown (in the background, in the marker's session, when a connection
   * problem gets in the way).
   */
  markerParent?: string;
}

/**
 * Operations committed together with ZooKeeper's multi: all of them happen, or none. Build it with
 * `client.transaction()`, chain operations, then `commit()`. Each operation is checked as it is
 * added, before any I/O. Like Curator's, a transaction whose reply is lost is sent again by default:
 * a create in it may then fail with NODEEXISTS although the first one went through, and a
 * transaction with neither creates nor versions may be applied twice. Commit with `markerParent`
 * for a commit applied at most once that says whether it was (see CommitOptions).
 *
 * @example
 * ```ts
 * const [created] = await client.transaction()
 *   .check('/config', { version: 3 })
 *   .create('/config/next-', { data: 'x', mode: 'PERSISTENT_SEQUENTIAL' })
 *   .delete('/config/old')
 *   .commit();
 * ```
 */
export class Transaction {
  private readonly ops: TransactionOp[] = [];
  /** The indexes of the ops whose data is compressed at commit. */
  private readonly toCompress = new Set<number>();
  private committed = false;

  /** @internal Made by `client.transaction()`. */
  constructor(
    private readonly run: CommitTransaction,
    private readonly checkSize: (ops: readonly TransactionOp[]) => void,
    private readonly defaultData: Buffer,
    private readonly compression: { readonly provider: CompressionProvider; readonly enabled: boolean },
  ) {}

  /**
   * Creates a node (data: the client's default data when omitted; mode: PERSISTENT). With
   * `compressed` (default: the client's `enableCompression`), the data is compressed at commit, as
   * by Curator's `.compressed()` in a transaction.
   */
  create(path: string, options: { data?: Buffer | Uint8Array | string; mode?: CreateMode; ttlMs?: number; compressed?: boolean } = {}): this {
    const o = validateOptions(options, 'options');
    const mode = o.mode === undefined ? 'PERSISTENT' : validateMode(o.mode);
    validatePath(path, { sequential: mode.includes('SEQUENTIAL') });
    const ttl = mode.endsWith('_WITH_TTL');
    if (ttl !== (o.ttlMs !== undefined)) throw new InvalidArgumentError(ttl ? `${mode} needs ttlMs` : `ttlMs applies only to the TTL modes, not ${mode}`, { path });
    const compressed = this.compressionWanted(o.compressed);
    const data = o.data === undefined ? this.defaultData : toData(o.data, 'data', !compressed);
    return this.add({ type: 'create', path, data, mode, ...(ttl ? { ttlMs: o.ttlMs } : {}) }, compressed);
  }

  /** Deletes a node, if its version matches (-1, the default, matches any). */
  delete(path: string, options: { version?: number } = {}): this {
    validatePath(path);
    return this.add({ type: 'delete', path, version: validateVersion(validateOptions(options, 'options').version) });
  }

  /**
   * Writes a node's data, if its version matches. With `compressed` (default: the client's
   * `enableCompression`), the data is compressed at commit.
   */
  setData(path: string, data: Buffer | Uint8Array | string, options: { version?: number; compressed?: boolean } = {}): this {
    validatePath(path);
    const o = validateOptions(options, 'options');
    const compressed = this.compressionWanted(o.compressed);
    return this.add({ type: 'setData', path, data: toData(data, 'data', !compressed), version: validateVersion(o.version) }, compressed);
  }

  /** Fails the transaction unless the node exists at this version (-1: exists at all). */
  check(path: string, options: { version?: number } = {}): this {
    validatePath(path);
    return this.add({ type: 'check', path, version: validateVersion(validateOptions(options, 'options').version) });
  }

  /**
   * Commits the operations atomically. Resolves with a result per operation, in order (a create's
   * path with its sequence, relative to the namespace). Rejects with TransactionError when the
   * server refused it (nothing happened), with UnsupportedError on a transport without multi (the
   * native binding), with SessionLostError when pinned to a `session` that has ended, with
   * TimeoutError after `timeoutMs`, with TransactionOutcomeUnknownError in the safe mode
   * (`markerParent`) when it cannot tell whether the transaction went in, with CompressionError
   * when data to compress could not be (nothing was sent), or with the error that stopped it. A
   * transaction commits once.
   */
  async commit(options: CommitOptions = {}): Promise<TransactionResult[]> {
    const o = validateOptions(options, 'options');
    const signal = validateSignal(o.signal);
    const session = validateSession(o.session);
    const timeoutMs = validateTimeout(o.timeoutMs, 'timeoutMs');
    const markerParent = o.markerParent === undefined ? undefined : validatePath(o.markerParent, { what: 'markerParent' });
    if (this.ops.length === 0) throw new InvalidArgumentError('a transaction needs at least one operation');
    if (this.committed) throw new InvalidArgumentError('a transaction commits once');
    this.committed = true;
    const ops = this.toCompress.size === 0 ? this.ops : await raceAbort(this.compressOps(), signal);
    this.checkSize(markerParent === undefined ? ops : [...ops, markerSizeOp(markerParent)]);
    const results = await withTimeout(timeoutMs, signal, (limit) => this.run(ops, limit, session, markerParent));
    const failedIndex = results.findIndex((r) => r.type === 'error' && r.code !== 'OK' && r.code !== 'RUNTIMEINCONSISTENCY');
    if (failedIndex >= 0 || results.some((r) => r.type === 'error')) {
      const outcomes = this.ops.map((op, i) => {
        const r = results[i];
        return { type: op.type, path: op.path, code: r?.type === 'error' ? r.code : 'OK' };
      });
      const at = failedIndex >= 0 ? failedIndex : 0;
      const failed = results[at];
      throw new TransactionError(at, outcomes, serverError(failed?.type === 'error' ? failed.rc : -1, { path: this.ops[at].path }));
    }
    return results.map((r, i) => toTransactionResult(this.ops[i].path, r as Exclude<OpResult, { type: 'error' }>));
  }

  private add(op: TransactionOp, compressed = false): this {
    if (this.committed) throw new InvalidArgumentError('a committed transaction takes no more operations');
    if (compressed) this.toCompress.add(this.ops.length);
    this.ops.push(op);
    return this;
  }

  private compressionWanted(flag: unknown): boolean {
    return compressionWanted(flag, this.compression.enabled);
  }

  /** The ops with the data of those asked compressed, compressed. */
  private compressOps(): Promise<TransactionOp[]> {
    return Promise.all(
      this.ops.map(async (op, i) => (this.toCompress.has(i) && 'data' in op ? { ...op, data: await compressData(this.compression.provider, op.path, op.data) } : op)),
    );
  }
}

/** What one operation gave, for the user: `path` is the operation's own (a create's result has its own). */
export function toTransactionResult(path: string, r: Exclude<OpResult, { type: 'error' }>): TransactionResult {
  switch (r.type) {
    case 'create':
      return { type: 'create', path: r.path, ...(r.stat ? { stat: r.stat } : {}) };
    case 'setData':
      return { type: 'setData', path, stat: r.stat };
    default:
      return { type: r.type, path };
  }
}

/** A stand-in for the marker's create, as long as the real one: for the request size check. */
function markerSizeOp(markerParent: string): TransactionOp {
  return { type: 'create', path: joinPath(markerParent, 'x'.repeat(MARKER_NAME_LENGTH)), data: Buffer.alloc(0), mode: 'EPHEMERAL' };
}

/** Runs `fn` with a signal that also aborts, with a TimeoutError, after `timeoutMs`: `fn` races it. */
async function withTimeout<T>(timeoutMs: number | undefined, signal: AbortSignal | undefined, fn: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  if (timeoutMs === undefined) return fn(signal);
  const limit = linkedSignal(signal === undefined ? [] : [signal]);
  const cancel = startTimer(timeoutMs, () => limit.abort(new TimeoutError(`the transaction did not commit within ${timeoutMs} ms`)));
  try {
    return await fn(limit.signal);
  } finally {
    cancel();
  }
}

/** The ops as the wire takes them: each path in the namespace, each create with its ACL. */
export function wireOps(ops: readonly TransactionOp[], namespace: Namespace, aclFor: AclForPath): Op[] {
  return ops.map((op): Op => {
    const path = namespace.full(op.path);
    return op.type === 'create' ? { ...op, path, acl: aclFor(path) } : { ...op, path };
  });
}

/**
 * Runs a transaction's operations with multi, retried as every operation is, with paths through
 * the namespace. Each create carries `aclFor(its path)` in the multi request itself: a transport
 * whose creates cannot carry an ACL is refused, as one without multi is (the native binding has
 * neither), since its creates would stay open.
 */
export async function commitTransaction(
  ctx: { retry: RetryLoop; namespace: Namespace; aclFor: AclForPath },
  ops: readonly TransactionOp[],
  signal: AbortSignal | undefined,
  session?: Session,
): Promise<OpResult[]> {
  const { retry, namespace, aclFor } = ctx;
  const full = wireOps(ops, namespace, aclFor);
  await namespace.ensure(signal);
  const results = await raceAbort(
    retry.run({ operation: 'multi', path: ops[0].path, signal, session }, (t) => {
      if (!t.multi || !t.aclOnCreate) throw new UnsupportedError('transactions need multi, which the native transport does not have: use the protocol transport');
      return t.multi(full);
    }),
    signal,
  );
  return results.map((r) => (r.type === 'create' ? { ...r, path: namespace.relative(r.path) } : r));
}
