import { markRetryable, ZkError, type ZkErrorOptions } from '../../src/recipeKit';

/**
 * An optimistic update of an atomic value lost a race: another writer changed (or created) the
 * node between our read and our write. It is what an atomic value's retry policy is asked about
 * between attempts, marked retryable so that every policy may try again, as Curator's do; it never
 * reaches the caller, who sees `succeeded: false` when the policy gives up.
 */
export class AtomicContentionError extends ZkError {
  override name = 'AtomicContentionError';
  declare readonly code: 'CONTENDED';
  constructor(options: ZkErrorOptions = {}) {
    super('CONTENDED', `another writer changed ${options.path ?? 'the value'} first`, options);
    markRetryable(this);
  }
}

/**
 * The bytes of an atomic number's node cannot be read as one: fewer bytes than the number needs
 * (8 for a long, 4 for an int). Curator throws the same for such a node. Empty data reads as 0.
 */
export class AtomicValueCorruptError extends ZkError {
  override name = 'AtomicValueCorruptError';
  declare readonly code: 'BAD_DATA';
  constructor(
    readonly bytes: Buffer,
    options: ZkErrorOptions = {},
  ) {
    const shown = [...bytes.subarray(0, 16)].map((b) => `0x${b.toString(16)}`).join(', ');
    super('BAD_DATA', `corrupted data for node ${options.path ?? '?'}: [${shown}${bytes.length > 16 ? ', …' : ''}]`, options);
  }
}
