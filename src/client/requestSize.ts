/**
 * The size of a request on the wire, checked before any I/O. ZooKeeper drops the connection of a
 * client that sends a frame larger than its jute.maxbuffer, and a client that retried that request
 * would drop every connection it made: so no request that cannot fit is ever sent.
 */
import { InvalidArgumentError } from '../errors';
import type { ACL } from '../transport/Transport';

/** ZooKeeper's default jute.maxbuffer: the largest frame a server accepts, 1 MiB less one byte. */
export const DEFAULT_MAX_REQUEST_BYTES = 0xfffff;

/** Request header (xid, type). */
const HEADER = 8;
/** A string or buffer on the wire: a 4-byte length, then the bytes. */
const field = (bytes: number) => 4 + bytes;
/** An ACL vector: its length, then each entry's perms, scheme and id. */
function aclBytes(acl: readonly ACL[]): number {
  return acl.reduce((bytes, a) => bytes + 4 + field(Buffer.byteLength(a.scheme)) + field(Buffer.byteLength(a.id)), 4);
}

/**
 * Bytes of a create request for a path (as sent to the server), data and the node's ACL.
 * `nameBytes`: ASCII the path gains on the way (a protection prefix, a sequence suffix).
 */
export function createRequestBytes(serverPath: string, dataBytes: number, withTtl: boolean, acl: readonly ACL[], nameBytes = 0): number {
  return HEADER + field(Buffer.byteLength(serverPath) + nameBytes) + field(dataBytes) + aclBytes(acl) + 4 + (withTtl ? 8 : 0);
}

/** Bytes of a setData request. */
export function setDataRequestBytes(serverPath: string, dataBytes: number): number {
  return HEADER + field(Buffer.byteLength(serverPath)) + field(dataBytes) + 4;
}

/** Bytes of a request that carries a path and at most a few fixed fields (reads, deletes, exists). */
export function pathRequestBytes(serverPath: string): number {
  return HEADER + field(Buffer.byteLength(serverPath)) + 8;
}

/** Throws InvalidArgumentError when a request of `bytes` would not fit in `limit`. */
export function checkRequestSize(bytes: number, limit: number, what: string, path: string): void {
  if (bytes > limit) {
    throw new InvalidArgumentError(
      `${what} would be a ${bytes}-byte request, more than the servers accept (${limit} bytes, their jute.maxbuffer): path and data together must fit`,
      { path },
    );
  }
}

/** Bytes of a multi request for `ops` (paths as sent to the server): each op's header and body, and the closing header. */
export function multiRequestBytes(ops: ReadonlyArray<{ type: string; path: string; data?: Buffer; ttlMs?: number; acl?: readonly ACL[] }>): number {
  const opHeader = 4 + 1 + 4;
  let bytes = HEADER + opHeader;
  for (const op of ops) {
    const path = field(Buffer.byteLength(op.path));
    if (op.type === 'create') bytes += opHeader + path + field(op.data?.length ?? 0) + aclBytes(op.acl ?? []) + 4 + (op.ttlMs !== undefined ? 8 : 0);
    else if (op.type === 'setData') bytes += opHeader + path + field(op.data?.length ?? 0) + 4;
    else bytes += opHeader + path + 4;
  }
  return bytes;
}
