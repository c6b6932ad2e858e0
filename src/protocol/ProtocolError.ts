import { ZkError } from '../errors';

/**
 * What was wrong with the bytes:
 * - 'frameTooLarge': a frame's length prefix is over the limit (the client's jute.maxbuffer);
 * - 'malformed': a negative length, or a record that does not fit its frame or breaks its schema;
 * - 'truncated': the connection ended inside a frame;
 * - 'unexpectedReply': a well-formed reply that answers no request, or answers out of order;
 * - 'notZooKeeper': the first reply cannot be an answer to the handshake: the peer is not a
 *   ZooKeeper server (an HTTP port, another service).
 */
export type ProtocolErrorKind = 'frameTooLarge' | 'malformed' | 'truncated' | 'unexpectedReply' | 'notZooKeeper';

/**
 * The server sent bytes the client cannot trust. The connection is dropped and established again,
 * as after a network error; callers only see it as the `cause` of a CONNECTIONLOSS. A library
 * error: zk-recipes found it, the server did not answer with it.
 */
export class ProtocolError extends ZkError {
  override name = 'ProtocolError';
  declare readonly code: 'PROTOCOL_ERROR';
  readonly kind: ProtocolErrorKind;

  constructor(kind: ProtocolErrorKind, message: string) {
    super('PROTOCOL_ERROR', message);
    this.kind = kind;
  }
}
