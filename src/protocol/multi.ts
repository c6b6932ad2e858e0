/**
 * Transactions (multi) and batched reads (multiRead): a sequence of MultiHeader + record pairs,
 * ended by a header with `done` set, both ways (ZooKeeper's MultiOperationRecord and
 * MultiResponse).
 */
import { SERVER_ERROR_CODES } from '../errors';
import type { Op, OpResult, ReadOp, ReadResult } from '../transport/Transport';
import { JuteReader, JuteWriter } from './jute';
import { CreateFlags, OpCode } from './opcodes';
import { ProtocolError } from './ProtocolError';
import {
  Create2ResponseRecord,
  CreateRequestRecord,
  CreateTTLRequestRecord,
  ErrorResponseRecord,
  GetChildrenResponseRecord,
  GetDataResponseRecord,
  MultiHeaderRecord,
  PathResponseRecord,
  PathVersionRecord,
  PathWatchRecord,
  SetDataRequestRecord,
  StatResponseRecord,
} from './records';

/** The name of a reply's error code ('OK' for 0), as ZkError codes are named. */
export function codeName(rc: number): string {
  return rc === 0 ? 'OK' : ((SERVER_ERROR_CODES as Record<number, string>)[rc] ?? `UNKNOWN_${rc}`);
}

function header(w: JuteWriter, type: number, done: boolean): void {
  MultiHeaderRecord.write(w, { type, done, err: -1 });
}

/**
 * Writes a transaction. A create goes as create, createTTL or createContainer by its mode, as the
 * Java client's Op.create sends it (the server answers TTL and container creates with the stat).
 * `serverPath` applies the chroot.
 */
export function writeMulti(w: JuteWriter, ops: readonly Op[], serverPath: (path: string) => string): void {
  for (const op of ops) {
    const path = serverPath(op.path);
    switch (op.type) {
      case 'create': {
        const flags = CreateFlags[op.mode];
        if (op.mode.endsWith('_WITH_TTL')) {
          header(w, OpCode.createTTL, false);
          CreateTTLRequestRecord.write(w, { path, data: op.data, acl: op.acl, flags, ttl: BigInt(op.ttlMs ?? 0) });
        } else {
          header(w, op.mode === 'CONTAINER' ? OpCode.createContainer : OpCode.create, false);
          CreateRequestRecord.write(w, { path, data: op.data, acl: op.acl, flags });
        }
        break;
      }
      case 'delete':
        header(w, OpCode.delete, false);
        PathVersionRecord.write(w, { path, version: op.version });
        break;
      case 'setData':
        header(w, OpCode.setData, false);
        SetDataRequestRecord.write(w, { path, data: op.data, version: op.version });
        break;
      case 'check':
        header(w, OpCode.check, false);
        PathVersionRecord.write(w, { path, version: op.version });
        break;
    }
  }
  header(w, -1, true);
}

/** Writes a batch of reads (multiRead); none sets a watch. */
export function writeMultiRead(w: JuteWriter, ops: readonly ReadOp[], serverPath: (path: string) => string): void {
  for (const op of ops) {
    header(w, op.type === 'getData' ? OpCode.getData : OpCode.getChildren, false);
    PathWatchRecord.write(w, { path: serverPath(op.path), watch: false });
  }
  header(w, -1, true);
}

type AnyResult = OpResult | ReadResult;

/** Reads a MultiResponse: one result per operation. `clientPath` strips the chroot from created paths. */
export function readMultiResults(r: JuteReader, clientPath: (path: string) => string): AnyResult[] {
  const results: AnyResult[] = [];
  for (;;) {
    const h = MultiHeaderRecord.read(r);
    if (h.done) return results;
    switch (h.type) {
      case OpCode.create:
        results.push({ type: 'create', path: clientPath(PathResponseRecord.read(r).path) });
        break;
      case OpCode.create2: {
        const { path, stat } = Create2ResponseRecord.read(r);
        results.push({ type: 'create', path: clientPath(path), stat });
        break;
      }
      case OpCode.delete:
        results.push({ type: 'delete' });
        break;
      case OpCode.setData:
        results.push({ type: 'setData', stat: StatResponseRecord.read(r).stat });
        break;
      case OpCode.check:
        results.push({ type: 'check' });
        break;
      case OpCode.getData: {
        const { data, stat } = GetDataResponseRecord.read(r);
        results.push({ type: 'getData', data, stat });
        break;
      }
      case OpCode.getChildren:
        results.push({ type: 'getChildren', children: GetChildrenResponseRecord.read(r).children });
        break;
      case OpCode.error: {
        const rc = ErrorResponseRecord.read(r).err;
        results.push({ type: 'error', code: codeName(rc), rc });
        break;
      }
      default:
        throw new ProtocolError('malformed', `a multi response holds an operation of unknown type ${h.type}`);
    }
  }
}
