import { InvalidArgumentError, UnsupportedError, ZkError, serverError, type ServerError } from '../errors';
import { validatePath } from '../paths';
import type { CreateMode, Op, OpResult, Stat } from '../transport/Transport';
import { raceAbort } from '../util/async';
import { toData, validateOptions, validateSignal } from '../validate';
import type { AclForPath } from './acls';
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

/** An operation as the user gives it: a create's ACL is the client's to choose, at commit. */
export type TransactionOp = Exclude<Op, { type: 'create' }> | Omit<Extract<Op, { type: 'create' }>, 'acl'>;

/** Runs a transaction's operations (paths relative to the namespace) and resolves with the server's results. */
export type CommitTransaction = (ops: readonly TransactionOp[], signal: AbortSignal | undefined, session: Session | undefined) => Promise<OpResult[]>;

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
}

/**
 * Operations committed together with ZooKeeper's multi: all of them happen, or none. Build it with
 * `client.transaction()`, chain operations, then `commit()`. Each operation is checked as it is
 * added, before any I/O. Like Curator's, a transaction whose reply is lost is sent again: a create
 * in it may then fail with NODEEXISTS although the first one went through.
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
  private committed = false;

  /** @internal Made by `client.transaction()`. */
  constructor(
    private readonly run: CommitTransaction,
    private readonly checkSize: (ops: readonly TransactionOp[]) => void,
    private readonly defaultData: Buffer,
  ) {}

  /** Creates a node (data: the client's default data when omitted; mode: PERSISTENT). */
  create(path: string, options: { data?: Buffer | Uint8Array | string; mode?: CreateMode; ttlMs?: number } = {}): this {
    const o = validateOptions(options, 'options');
    const mode = o.mode === undefined ? 'PERSISTENT' : validateMode(o.mode);
    validatePath(path, { sequential: mode.includes('SEQUENTIAL') });
    const ttl = mode.endsWith('_WITH_TTL');
    if (ttl !== (o.ttlMs !== undefined)) throw new InvalidArgumentError(ttl ? `${mode} needs ttlMs` : `ttlMs applies only to the TTL modes, not ${mode}`, { path });
    return this.add({ type: 'create', path, data: o.data === undefined ? this.defaultData : toData(o.data), mode, ...(ttl ? { ttlMs: o.ttlMs } : {}) });
  }

  /** Deletes a node, if its version matches (-1, the default, matches any). */
  delete(path: string, options: { version?: number } = {}): this {
    validatePath(path);
    return this.add({ type: 'delete', path, version: validateVersion(validateOptions(options, 'options').version) });
  }

  /** Writes a node's data, if its version matches. */
  setData(path: string, data: Buffer | Uint8Array | string, options: { version?: number } = {}): this {
    validatePath(path);
    return this.add({ type: 'setData', path, data: toData(data), version: validateVersion(validateOptions(options, 'options').version) });
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
   * native binding), with SessionLostError when pinned to a `session` that has ended, or with the
   * error that stopped it. A transaction commits once.
   */
  async commit(options: CommitOptions = {}): Promise<TransactionResult[]> {
    const o = validateOptions(options, 'options');
    const signal = validateSignal(o.signal);
    const session = validateSession(o.session);
    if (this.ops.length === 0) throw new InvalidArgumentError('a transaction needs at least one operation');
    if (this.committed) throw new InvalidArgumentError('a transaction commits once');
    this.committed = true;
    this.checkSize(this.ops);
    const results = await this.run(this.ops, signal, session);
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
    return results.map((r, i): TransactionResult => {
      const path = this.ops[i].path;
      switch (r.type) {
        case 'create':
          return { type: 'create', path: r.path, ...(r.stat ? { stat: r.stat } : {}) };
        case 'setData':
          return { type: 'setData', path, stat: r.stat };
        default:
          return { type: r.type as 'delete' | 'check', path };
      }
    });
  }

  private add(op: TransactionOp): this {
    if (this.committed) throw new InvalidArgumentError('a committed transaction takes no more operations');
    this.ops.push(op);
    return this;
  }
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
  const full = ops.map((op): Op => {
    const path = namespace.full(op.path);
    return op.type === 'create' ? { ...op, path, acl: aclFor(path) } : { ...op, path };
  });
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
