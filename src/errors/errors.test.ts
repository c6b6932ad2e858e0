import {
  AuthError,
  ConnectionLossError,
  ConnectionTimeoutError,
  InvalidArgumentError,
  NodeError,
  ServerError,
  SessionError,
  SystemError,
  TimeoutError,
  ZkError,
  isZkError,
  serverError,
} from '.';
import { isRetryableError, isSessionEndedError } from '../retry';

describe('serverError', () => {
  it.each([
    [-4, 'CONNECTIONLOSS', ConnectionLossError],
    [-7, 'OPERATIONTIMEOUT', ConnectionLossError],
    [-112, 'SESSIONEXPIRED', SessionError],
    [-118, 'SESSIONMOVED', SessionError],
    [-101, 'NONODE', NodeError],
    [-110, 'NODEEXISTS', NodeError],
    [-103, 'BADVERSION', NodeError],
    [-111, 'NOTEMPTY', NodeError],
    [-102, 'NOAUTH', AuthError],
    [-115, 'AUTHFAILED', AuthError],
    [-1, 'SYSTEMERROR', SystemError],
    [-5, 'MARSHALLINGERROR', SystemError],
    [-125, 'QUOTAEXCEEDED', SystemError],
    // The numbers the server sends (KeeperException.Code; the C client's zookeeper.h agrees).
    [-123, 'RECONFIGDISABLED', SystemError],
    [-124, 'SESSIONCLOSEDREQUIRESASLAUTH', AuthError],
    [-127, 'THROTTLEDOP', SystemError],
    [-12, 'UNKNOWNSESSION', SystemError],
  ] as const)('maps rc %d to %s in its family', (rc, code, family) => {
    const err = serverError(rc, { path: '/a' });
    expect(err).toBeInstanceOf(family);
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toBeInstanceOf(ZkError);
    expect(err.code).toBe(code);
    expect(err.rc).toBe(rc);
    expect(err.path).toBe('/a');
    expect(err.message).toBe(`${code} at /a`);
    expect(err.name).toBe(family.name);
    // By name too, with the same number.
    expect(serverError(code).rc).toBe(rc);
  });

  it('names an unknown code instead of inventing a known one', () => {
    const err = serverError(-999);
    expect(err).toBeInstanceOf(SystemError);
    expect(err.code).toBe('SYSTEMERROR');
    expect(err.message).toContain('-999');
  });

  it('keeps the cause', () => {
    const cause = new Error('socket reset');
    expect(serverError(-4, { cause }).cause).toBe(cause);
  });
});

describe('library errors', () => {
  it('are ZkErrors with the library codes, apart from the server branch', () => {
    const bad = new InvalidArgumentError('bad');
    expect(bad).toBeInstanceOf(ZkError);
    expect(bad).not.toBeInstanceOf(ServerError);
    expect(isZkError(bad, 'INVALID_ARGUMENT')).toBe(true);
  });

  it('ConnectionTimeoutError is a TimeoutError, and retryable like a connection loss', () => {
    const err = new ConnectionTimeoutError('no connection');
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.code).toBe('CONNECTION_TIMEOUT');
    expect(isRetryableError(err)).toBe(true);
  });

  it('tells an ended session, from the server or from the client', () => {
    expect(isSessionEndedError(serverError('SESSIONEXPIRED'))).toBe(true);
    expect(isSessionEndedError(serverError('CONNECTIONLOSS'))).toBe(false);
  });
});
