/**
 * Type tests, compiled by `npm run typecheck` (and by Jest): each `@ts-expect-error` line must
 * fail to compile, so a mistake a user could make stays a compile error.
 */
import {
  ConnectionTimeoutError,
  LockTimeoutError,
  NodeError,
  ServerError,
  ZkClient,
  isZkError,
  serverError,
  type PreviousConnectionState,
  type ZkError,
  type ZkErrorCode,
} from '../index';

/** Every NodeError code handled: a code added to the family without a case here fails to compile. */
function describeNodeError(err: NodeError): string {
  switch (err.code) {
    case 'NONODE':
      return 'missing';
    case 'NODEEXISTS':
      return 'exists';
    case 'NOTEMPTY':
      return 'has children';
    case 'BADVERSION':
      return 'changed meanwhile';
    case 'NOCHILDRENFOREPHEMERALS':
      return 'ephemeral parent';
    case 'NOWATCHER':
      return 'no such watch';
    default: {
      const unhandled: never = err.code;
      return unhandled;
    }
  }
}

describe('types that guide', () => {
  it('isZkError takes only known codes, and narrows `code` to the one given', () => {
    const err: unknown = serverError('NONODE', { path: '/a' });
    // @ts-expect-error: there is no code 'NO_NODE'
    expect(isZkError(err, 'NO_NODE')).toBe(false);
    // @ts-expect-error: codes are ZooKeeper's names, upper case
    expect(isZkError(err, 'nonode')).toBe(false);
    expect(isZkError(err, 'NONODE')).toBe(true);
    if (isZkError(err, 'NONODE')) {
      const code: 'NONODE' = err.code;
      expect(code).toBe('NONODE');
    }
    const any: ZkErrorCode = 'LOCK_TIMEOUT';
    expect(isZkError(new LockTimeoutError('late'), any)).toBe(true);
  });

  it("each class's code is a union the compiler checks", () => {
    expect(describeNodeError(serverError('NOTEMPTY') as NodeError)).toBe('has children');
    const timeout: ZkError = new ConnectionTimeoutError('no server');
    const lock = new LockTimeoutError('late');
    // @ts-expect-error: a LockTimeoutError's code is 'LOCK_TIMEOUT', never a server's
    expect(lock.code === 'NONODE').toBe(false);
    const server: ServerError = serverError('CONNECTIONLOSS');
    // @ts-expect-error: a ServerError's code is one ZooKeeper answers with
    expect(server.code === 'LOCK_TIMEOUT').toBe(false);
    expect(timeout.code).toBe('CONNECTION_TIMEOUT');
  });

  it("a misspelled client event does not compile; the first 'stateChanged' comes from 'LATENT'", async () => {
    const client = new ZkClient({ connectString: '127.0.0.1:2181' });
    const noop = () => undefined;
    // @ts-expect-error: the event is 'stateChanged'
    client.on('stateChange', noop);
    // @ts-expect-error: the event is 'closed'
    client.once('close', noop);
    // @ts-expect-error: the event is 'stateChanged'
    client.off('statechanged', noop);
    const seen: PreviousConnectionState[] = [];
    const listener = (_state: string, previous: PreviousConnectionState) => seen.push(previous);
    client.on('stateChanged', listener).off('stateChanged', listener);
    // @ts-expect-error: 'closed' listeners get no arguments
    client.on('closed', (reason: string) => reason);
    await client.close();
    expect(seen).toEqual([]);
  });
});
