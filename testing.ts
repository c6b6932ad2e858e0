// The declarations use Node's types (Buffer, node:events): this reference brings them in for a
// project whose tsconfig lists no `types` (the default from TypeScript 6 on).
/// <reference types="node" preserve="true" />
/** zk-recipes/testing: real ZooKeeper servers, ensembles and faults for tests. */
export * from './src/testing';
