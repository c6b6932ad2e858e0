/**
 * The native binding's values and ours: create modes and watch event types to and from its
 * constants, its hex session ids, its password format, its stats. Loaded only with the binding.
 */
import ZooKeeperBinding from 'zookeeper';
import { InvalidArgumentError } from '../errors';
import type { CreateMode, Stat, WatchEventType } from './Transport';

/* eslint-disable @typescript-eslint/no-explicit-any -- the binding has no usable typings for its native object */
export type NativeStat = any;

/** The binding's constants. */
export const C = (ZooKeeperBinding as any).constants as Record<string, number>;

export const CREATE_FLAGS: Readonly<Record<CreateMode, number>> = Object.freeze({
  PERSISTENT: C.ZOO_PERSISTENT,
  PERSISTENT_SEQUENTIAL: C.ZOO_PERSISTENT_SEQUENTIAL,
  EPHEMERAL: C.ZOO_EPHEMERAL,
  EPHEMERAL_SEQUENTIAL: C.ZOO_EPHEMERAL_SEQUENTIAL,
  CONTAINER: C.ZOO_CONTAINER,
  PERSISTENT_WITH_TTL: C.ZOO_PERSISTENT_WITH_TTL,
  PERSISTENT_SEQUENTIAL_WITH_TTL: C.ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL,
});

export const WATCH_TYPES: Readonly<Record<number, WatchEventType>> = Object.freeze({
  [C.ZOO_CREATED_EVENT]: 'created',
  [C.ZOO_DELETED_EVENT]: 'deleted',
  [C.ZOO_CHANGED_EVENT]: 'changed',
  [C.ZOO_CHILD_EVENT]: 'child',
  [C.ZOO_NOTWATCHING_EVENT]: 'notWatching',
});

/** Hex session id as the binding prints it (unsigned, no leading zeros) to bigint and back. */
export function sessionIdFromHex(hex: string): bigint {
  return BigInt(`0x${hex}`);
}
export function sessionIdToHex(id: bigint): string {
  return id.toString(16);
}

/**
 * The binding parses the password's hex digits as uppercase only: a lowercase digit silently
 * becomes another byte, and the server then answers the attach with "expired". Passwords from
 * other clients (Java prints lowercase) are normalised here.
 */
export function normalizePassword(password: string | undefined): string {
  if (typeof password !== 'string' || !/^[0-9a-fA-F]{32}$/.test(password)) {
    throw new InvalidArgumentError('a session password is 16 bytes as 32 hex digits');
  }
  return password.toUpperCase();
}

export function toStat(s: NativeStat): Stat {
  return {
    czxid: BigInt(s.czxid),
    mzxid: BigInt(s.mzxid),
    pzxid: BigInt(s.pzxid),
    ctime: +s.ctime,
    mtime: +s.mtime,
    version: s.version,
    cversion: s.cversion,
    aversion: s.aversion,
    ephemeralOwner: sessionIdFromHex(s.ephemeralOwner),
    dataLength: s.dataLength,
    numChildren: s.numChildren,
  };
}
