/** The recipes, one folder per family. */
export * from './locks';
