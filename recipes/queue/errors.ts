import { TimeoutError, ZkError, type ZkErrorOptions } from '../../src/recipeKit';

/**
 * An item could not be turned into bytes (a BigInt or a circular object with the JSON serializer,
 * a serializer that threw or returned something other than bytes), or a node's bytes could not be
 * turned back into items. A put that throws it has written nothing. `cause` is the serializer's
 * own error, when there is one.
 */
export class QueueSerializationError extends ZkError {
  override name = 'QueueSerializationError';
  declare readonly code: 'QUEUE_SERIALIZATION';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super('QUEUE_SERIALIZATION', message, options);
  }
}

/** `element()` or `remove()` on an empty queue: Java's NoSuchElementException. */
export class NoSuchElementError extends ZkError {
  override name = 'NoSuchElementError';
  declare readonly code: 'NO_SUCH_ELEMENT';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super('NO_SUCH_ELEMENT', message, options);
  }
}

/**
 * The reason an item's `signal` aborts with in a lock-safe queue: the session that held the item's
 * lock node is LOST, so another consumer may be given the item while this one still works on it.
 */
export class QueueItemLockLostError extends ZkError {
  override name = 'QueueItemLockLostError';
  declare readonly code: 'QUEUE_ITEM_LOCK_LOST';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super('QUEUE_ITEM_LOCK_LOST', message, options);
  }
}

/** `take({ timeoutMs })` found no item in time. */
export class QueueTimeoutError extends TimeoutError {
  override name = 'QueueTimeoutError';
  declare readonly code: 'QUEUE_TIMEOUT';
  constructor(message: string, options: ZkErrorOptions = {}) {
    super(message, { ...options, code: 'QUEUE_TIMEOUT' });
  }
}
