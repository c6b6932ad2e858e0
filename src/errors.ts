/**
 * Typed errors. `ZkError` is the base of every error zk-recipes throws; `code` says what happened,
 * in ZooKeeper's own vocabulary where ZooKeeper produced it ('NONODE', 'CONNECTIONLOSS', …) and in
 * the library's where the library did ('INVALID_ARGUMENT', 'CLIENT_CLOSED', …).
 */

/**
 * Error codes by their number: the server's (KeeperException.Code, the same on the wire for every
 * client) and the C client's own (-9 INVALIDSTATE, -116 CLOSING, -117 NOTHING).
 */
export const ZK_RETURN_CODES: Readonly<Record<number, string>> = Object.freeze({
  [-1]: 'SYSTEMERROR',
  [-2]: 'RUNTIMEINCONSISTENCY',
  [-3]: 'DATAINCONSISTENCY',
  [-4]: 'CONNECTIONLOSS',
  [-5]: 'MARSHALLINGERROR',
  [-6]: 'UNIMPLEMENTED',
  [-7]: 'OPERATIONTIMEOUT',
  [-8]: 'BADARGUMENTS',
  [-9]: 'INVALIDSTATE',
  [-12]: 'UNKNOWNSESSION',
  [-13]: 'NEWCONFIGNOQUORUM',
  [-14]: 'RECONFIGINPROGRESS',
  [-15]: 'SSLCONNECTIONERROR',
  [-100]: 'APIERROR',
  [-101]: 'NONODE',
  [-102]: 'NOAUTH',
  [-103]: 'BADVERSION',
  [-108]: 'NOCHILDRENFOREPHEMERALS',
  [-110]: 'NODEEXISTS',
  [-111]: 'NOTEMPTY',
  [-112]: 'SESSIONEXPIRED',
  [-113]: 'INVALIDCALLBACK',
  [-114]: 'INVALIDACL',
  [-115]: 'AUTHFAILED',
  [-116]: 'CLOSING',
  [-117]: 'NOTHING',
  [-118]: 'SESSIONMOVED',
  [-119]: 'NOTREADONLY',
  [-120]: 'EPHEMERALONLOCALSESSION',
  [-121]: 'NOWATCHER',
  [-122]: 'REQUESTTIMEOUT',
  [-123]: 'RECONFIGDISABLED',
  [-124]: 'SESSIONCLOSEDREQUIRESASLAUTH',
  [-125]: 'QUOTAEXCEEDED',
  [-127]: 'THROTTLEDOP',
});

/** Codes that Curator's retry loop retries: the operation may succeed on another attempt. */
export const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'CONNECTIONLOSS',
  'OPERATIONTIMEOUT',
  'SESSIONMOVED',
  'SESSIONEXPIRED',
]);

export interface ZkErrorOptions {
  path?: string;
  cause?: unknown;
  rc?: number;
}

/**
 * Base of every zk-recipes error.
 * - `code`: 'NONODE', 'NODEEXISTS', 'CONNECTIONLOSS', … for ZooKeeper's errors; the library's own
 *   errors have their own codes.
 * - `path`: the path the operation was about, relative to the client's namespace, when there is one.
 * - `rc`: the C client's numeric return code, when ZooKeeper produced the error.
 */
export class ZkError extends Error {
  override name = 'ZkError';
  readonly code: string;
  readonly path: string | undefined;
  readonly rc: number | undefined;

  constructor(code: string, message: string, options: ZkErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.path = options.path;
    this.rc = options.rc;
  }

  /** Builds the error for a C client return code. */
  static fromReturnCode(rc: number, path?: string, cause?: unknown): ZkError {
    const code = ZK_RETURN_CODES[rc] ?? `UNKNOWN_${rc}`;
    const where = path === undefined ? '' : ` at ${path}`;
    return new ZkError(code, `${code}${where} (rc ${rc})`, { path, rc, cause });
  }

  /** Whether Curator's retry loop would retry this error (CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONMOVED, SESSIONEXPIRED). */
  get retryable(): boolean {
    return RETRYABLE_CODES.has(this.code);
  }
}

/** True when `err` is a ZkError with the given code. */
export function isZkError(err: unknown, code?: string): err is ZkError {
  return err instanceof ZkError && (code === undefined || err.code === code);
}

/** Bad input caught before any I/O: a bad path, oversized data, a negative timeout, a wrong type. */
export class InvalidArgumentError extends ZkError {
  override name = 'InvalidArgumentError';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super('INVALID_ARGUMENT', message, options);
  }
}

/** The client was closed, or is closing, so the operation cannot run. */
export class ClientClosedError extends ZkError {
  override name = 'ClientClosedError';
  constructor(message = 'the client is closed', options: ZkErrorOptions = {}) {
    super('CLIENT_CLOSED', message, options);
  }
}

/** A wait (for a connection, a lock, a leader) ran out of time. */
export class TimeoutError extends ZkError {
  override name = 'TimeoutError';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super('TIMEOUT', message, options);
  }
}

/** A feature that is not available was asked for (read-only mode; the native transport without its binding). */
export class UnsupportedError extends ZkError {
  override name = 'UnsupportedError';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super('UNSUPPORTED', message, options);
  }
}
