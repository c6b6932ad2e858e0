/** Nodes that keep themselves: PersistentNode, PersistentTtlNode, and GroupMember on top of them. */
export { PersistentNode, PERSISTENT_NODE_DEFAULTS, type PersistentNodeOptions, type PersistentNodeEvents, type PersistentNodeWaitOptions } from './PersistentNode';
export { PersistentTtlNode, PERSISTENT_TTL_NODE_DEFAULTS, type PersistentTtlNodeOptions } from './PersistentTtlNode';
export { PersistentNodeTimeoutError } from './errors';
export { GroupMember, type GroupMemberOptions, type GroupMemberEvents } from './GroupMember';
