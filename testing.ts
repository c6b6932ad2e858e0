/** zk-recipes/testing: real ZooKeeper servers, ensembles and faults for tests. */
export * from './src/testing';
