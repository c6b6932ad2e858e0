/** The recipes, one folder per family. */
export * from './locks';
export * from './shared';
export * from './leader';
export * from './queue';
export * from './atomic';
export * from './barriers';
export * from './nodes';
export * from './cache';
export * from './discovery';
