/**
 * The recipes' one door into the client floor: everything under `recipes/` that needs the client,
 * its errors, validation, watches, clocks and metrics takes it from here, never from the module
 * that defines it (`npm run lint` fails otherwise). What is listed is what recipes may lean on; a
 * name added here is a promise kept to every recipe.
 *
 * Not the public API: the package's entry points choose what users see.
 *
 * @packageDocumentation
 */
export { ConnectionState } from './client/ConnectionState';
export { PersistentWatcher, type PersistentWatchEvent } from './client/PersistentWatcher';
export { Session } from './client/Session';
export { TransactionError, TransactionOutcomeUnknownError } from './client/Transaction';
export { ZkClient, type CreatedAndListed, type PreparedCreate } from './client/ZkClient';
export { deleteOwnNode, deleteOwnNodeWithin } from './client/deleteOwnNode';
export { validateClient, validateRecipePath } from './client/recipeArguments';
export {
  ClientClosedError,
  IllegalStateError,
  InvalidArgumentError,
  isZkError,
  serverError,
  SessionLostError,
  TimeoutError,
  ZkError,
  type ZkErrorOptions,
} from './errors';
export { metrics, startClock, waitOutcome, type LockRecipe } from './metrics/channels';
export { joinPath, nodeName, validatePath } from './paths';
export { isRetryableError, isSessionEndedError, RetryNTimes, type RetryPolicy } from './retry';
export { markRetryable } from './retry/RetryPolicy';
export { type CreateMode, type Stat } from './transport/Transport';
export { StepLoop } from './util/StepLoop';
export { abortReason, deferred, raceAbort, sleep } from './util/async';
export { Deadline, DeadlineScope, TIMED_OUT, waitFor } from './util/deadline';
export { emitSafely, subscribe } from './util/events';
export { linkedSignal } from './util/linkedSignal';
export { now, startTimer } from './util/timers';
export {
  describeValue,
  MAX_DATA_BYTES,
  toData,
  validateBoolean,
  validateFunction,
  validateOptions,
  validatePositiveInt,
  validateSignal,
  validateString,
  validateTimeout,
} from './validate';
export { ChildrenWatch, NodeWatch, type NodeChildren, type NodeData } from './watch';
export { DeletionWait, type DeletionListener, type DeletionOutcome } from './watch/DeletionWait';
