/**
 * What ZooKeeper answered: one class per family of codes, each with the union of its codes, so
 * `err instanceof NodeError && err.code === 'NONODE'` narrows as it reads. Build them with
 * `serverError(rc)`; nothing in zk-recipes invents one.
 */
import { SERVER_ERROR_CODES, type ServerErrorCode } from './codes';
import { ZkError, type ZkErrorOptions } from './ZkError';

const RC_BY_CODE: ReadonlyMap<string, number> = new Map(Object.entries(SERVER_ERROR_CODES).map(([rc, code]) => [code, Number(rc)]));

/** The connection went while the request was out: it may or may not have happened. Retryable. */
export type ConnectionLossCode = 'CONNECTIONLOSS' | 'OPERATIONTIMEOUT';
/** The session ended, moved, or is closing. */
export type SessionErrorCode = 'SESSIONEXPIRED' | 'SESSIONMOVED' | 'CLOSING' | 'EPHEMERALONLOCALSESSION';
/** The request does not fit the tree as it is: a missing or existing node, a version, children. */
export type NodeErrorCode = 'NONODE' | 'NODEEXISTS' | 'NOTEMPTY' | 'BADVERSION' | 'NOCHILDRENFOREPHEMERALS' | 'NOWATCHER';
/** Who we are, and what we may do. */
export type AuthErrorCode = 'NOAUTH' | 'AUTHFAILED' | 'INVALIDACL' | 'SESSIONCLOSEDREQUIRESASLAUTH';
/** Everything else the server (or the client library under us) reports. */
export type SystemErrorCode = Exclude<ServerErrorCode, ConnectionLossCode | SessionErrorCode | NodeErrorCode | AuthErrorCode>;

/** Base of every error ZooKeeper answered with. `rc` is the numeric code on the wire. */
export class ServerError extends ZkError {
  override name = 'ServerError';
  declare readonly code: ServerErrorCode;
  readonly rc: number;

  constructor(code: ServerErrorCode, message: string, options: ZkErrorOptions = {}) {
    super(code, message, options);
    this.rc = RC_BY_CODE.get(code) ?? 0;
  }
}

export class ConnectionLossError extends ServerError {
  override name = 'ConnectionLossError';
  declare readonly code: ConnectionLossCode;
}

export class SessionError extends ServerError {
  override name = 'SessionError';
  declare readonly code: SessionErrorCode;
}

export class NodeError extends ServerError {
  override name = 'NodeError';
  declare readonly code: NodeErrorCode;
}

export class AuthError extends ServerError {
  override name = 'AuthError';
  declare readonly code: AuthErrorCode;
}

export class SystemError extends ServerError {
  override name = 'SystemError';
  declare readonly code: SystemErrorCode;
}

const FAMILIES: ReadonlyArray<[ReadonlySet<string>, new (code: never, message: string, options?: ZkErrorOptions) => ServerError]> = [
  [new Set<ConnectionLossCode>(['CONNECTIONLOSS', 'OPERATIONTIMEOUT']), ConnectionLossError],
  [new Set<SessionErrorCode>(['SESSIONEXPIRED', 'SESSIONMOVED', 'CLOSING', 'EPHEMERALONLOCALSESSION']), SessionError],
  [new Set<NodeErrorCode>(['NONODE', 'NODEEXISTS', 'NOTEMPTY', 'BADVERSION', 'NOCHILDRENFOREPHEMERALS', 'NOWATCHER']), NodeError],
  [new Set<AuthErrorCode>(['NOAUTH', 'AUTHFAILED', 'INVALIDACL', 'SESSIONCLOSEDREQUIRESASLAUTH']), AuthError],
];

/** Whether `code` is one ZooKeeper answers with. */
export function isServerErrorCode(code: string): code is ServerErrorCode {
  return RC_BY_CODE.has(code);
}

/**
 * The error for a code ZooKeeper answered with (its number on the wire, or its name), in the
 * class of its family. An unknown number gives a SystemError 'SYSTEMERROR' that names it.
 */
export function serverError(rcOrCode: number | ServerErrorCode, options: ZkErrorOptions & { message?: string } = {}): ServerError {
  const known = typeof rcOrCode === 'number' ? (SERVER_ERROR_CODES as Record<number, ServerErrorCode>)[rcOrCode] : rcOrCode;
  const code: ServerErrorCode = known ?? 'SYSTEMERROR';
  const where = options.path === undefined ? '' : ` at ${options.path}`;
  const message = options.message ?? (known === undefined ? `unknown error code ${rcOrCode}${where}` : `${code}${where}`);
  const family = FAMILIES.find(([codes]) => codes.has(code));
  return family ? new family[1](code as never, message, options) : new SystemError(code as SystemErrorCode, message, options);
}
