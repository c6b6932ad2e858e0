/** zk-recipes: Apache Curator's ZooKeeper recipes for Node.js. */
export * from './src';
export * from './recipes';
