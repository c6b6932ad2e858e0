export { DistributedQueue } from './DistributedQueue';
export { DistributedPriorityQueue } from './DistributedPriorityQueue';
export { DistributedDelayQueue } from './DistributedDelayQueue';
export { DistributedIdQueue } from './DistributedIdQueue';
export { SimpleDistributedQueue, type TakeOptions } from './SimpleDistributedQueue';
export {
  QueueBase,
  QUEUE_DEFAULTS,
  type QueueOptions,
  type PutOptions,
  type ConsumeOptions,
  type QueueItemHandler,
} from './QueueBase';
export {
  QueueConsumerEngine,
  type ErrorMode,
  type QueueItemContext,
  type NodeOutcome,
  type NodeSink,
  type ClaimedNode,
  type EngineSettings,
} from './QueueConsumerEngine';
export { QueueSerializationError, NoSuchElementError, QueueTimeoutError, QueueItemLockLostError } from './errors';
export {
  CURATOR_ITEM_FORMAT_VERSION,
  bytesSerializer,
  curatorItemSerializer,
  decodeNode,
  defaultSerializer,
  encodeNode,
  isMultiItemSerializer,
  jsonSerializer,
  utf8Serializer,
  type MultiItemSerializer,
  type QueueSerializer,
} from './serializers';
export {
  DELAY_ORDER,
  FIFO_ORDER,
  ID_ORDER,
  PRIORITY_ORDER,
  QUEUE_ITEM_NAME,
  SIMPLE_QUEUE_ITEM_NAME,
  delayItemName,
  epochOf,
  epochToString,
  fixId,
  idItemName,
  parseId,
  priorityItemName,
  priorityToString,
  type QueueOrder,
} from './naming';
