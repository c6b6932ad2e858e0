/**
 * The native binding's values and ours, none of which needs the binding itself: its hex session
 * ids, its password format, its stats. (Its constants, create modes and event types, are read in
 * NativeTransport, the one module that imports `zookeeper`.)
 */
import { InvalidArgumentError } from '../errors';
import type { Stat } from './Transport';

/* eslint-disable @typescript-eslint/no-explicit-any -- the binding has no usable typings for its native object */
export type NativeStat = any;

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
