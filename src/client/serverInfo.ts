/**
 * The client's reads past the core set, which only the protocol transport can send: several reads
 * in one request (multiRead), and what the server knows of the session (its ephemeral nodes, its
 * identities) or of a subtree (how many nodes). The native binding has none of these calls.
 */
import { InvalidArgumentError, UnsupportedError, serverError, type ServerError } from '../errors';
import { validatePath } from '../paths';
import type { ReadOp, ReadResult, Stat, Transport } from '../transport/Transport';

export type { ReadOp, ClientIdentity } from '../transport/Transport';

/**
 * The result of one read of `multiRead`, in the order of the reads. Each read succeeds or fails on
 * its own, as with the Java client's `multi` of `Op.getData` / `Op.getChildren`: a failed one
 * (a missing node: NONODE) has `error`, with the read's path, and the others still have their values.
 */
export type MultiReadResult =
  | { readonly type: 'getData'; readonly data: Buffer; readonly stat: Stat }
  | { readonly type: 'getChildren'; readonly children: string[] }
  | { readonly type: 'error'; readonly error: ServerError };

/** The names of the optional calls, as in the Transport interface. */
type OptionalRead = 'multiRead' | 'getEphemerals' | 'getAllChildrenNumber' | 'whoAmI';

/** The transport's call, or UnsupportedError naming the transport that has it. */
export function requireCall<K extends OptionalRead>(t: Transport, call: K): NonNullable<Transport[K]> {
  const method = t[call];
  if (typeof method !== 'function') {
    throw new UnsupportedError(`${call} needs the protocol transport (transport: 'protocol', the default): the native binding has no such call`);
  }
  return method.bind(t) as NonNullable<Transport[K]>;
}

/** Checks the reads of a multiRead before any I/O: an array of { type: 'getData' | 'getChildren', path }. */
export function validateReadOps(ops: unknown): ReadOp[] {
  if (!Array.isArray(ops) || ops.length === 0) throw new InvalidArgumentError('multiRead needs a non-empty array of reads');
  return ops.map((op: unknown, i) => {
    const read = op as Partial<ReadOp> | null;
    if (read === null || typeof read !== 'object' || (read.type !== 'getData' && read.type !== 'getChildren')) {
      throw new InvalidArgumentError(`read ${i} must be { type: 'getData' | 'getChildren', path }`);
    }
    return { type: read.type, path: validatePath(read.path, { what: `read ${i}'s path` }) };
  });
}

/** The user's results: an error entry becomes the ServerError of its code, at the read's path. */
export function toMultiReadResults(results: readonly ReadResult[], ops: readonly ReadOp[]): MultiReadResult[] {
  return results.map((r, i) => (r.type === 'error' ? { type: 'error', error: serverError(r.rc, { path: ops[i].path }) } : r));
}
