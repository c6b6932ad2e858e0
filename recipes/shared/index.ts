export { SharedCount, encodeCount, decodeCount, type VersionedCount, type SharedCountListener } from './SharedCount';
export { SharedValue, type SharedBytes, type SharedValueEvents, type SharedValueListener, type VersionedValue } from './SharedValue';
