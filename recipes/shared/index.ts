export { SharedCount, encodeCount, decodeCount, type VersionedCount, type SharedCountListener } from './SharedCount';
