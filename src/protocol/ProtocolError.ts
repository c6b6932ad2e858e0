import { ZkError } from '../errors';

/**
 * What was wrong with the bytes:
 * - 'frameTooLarge': a frame's length prefix is over the limit (the client's jute.maxbuffer);
 * - 'malformed': a negative length, or a record that does not fit its frame or breaks its schema;
 * - 'truncated': the connection ended inside a frame;
 * - 'unexpectedReply': a well-formed reply that answers no request, or answers out of order.
 */
export type ProtocolErrorKind = 'frameTooLarge' | 'malformed' | 'truncated' | 'unexpectedReply';

/**
 * The server sent bytes the client cannot trust. The connection is dropped and established again,
 * as after a network error; callers only see it as the `cause` of a CONNECTIONLOSS.
 */
export class ProtocolError extends ZkError {
  override name = 'ProtocolError';
  readonly kind: ProtocolErrorKind;

  constructor(kind: ProtocolErrorKind, message: string) {
    // ZooKeeper's word for bytes that cannot be (un)marshalled.
    super('MARSHALLINGERROR', message, { rc: -5 });
    this.kind = kind;
  }
}
