/** Checks of the client's own arguments, before any I/O. */
import { InvalidArgumentError } from '../errors';
import type { CreateMode } from '../transport/Transport';
import { describeValue } from '../validate';
import { Session } from './Session';

export const CREATE_MODES: ReadonlySet<string> = new Set<CreateMode>([
  'PERSISTENT',
  'PERSISTENT_SEQUENTIAL',
  'EPHEMERAL',
  'EPHEMERAL_SEQUENTIAL',
  'CONTAINER',
  'PERSISTENT_WITH_TTL',
  'PERSISTENT_SEQUENTIAL_WITH_TTL',
]);

/** The longest TTL the native binding can pass (a 32-bit int): about 24.8 days. */
export const MAX_TTL_MS = 0x7fffffff;

export function validateMode(mode: unknown): CreateMode {
  if (!CREATE_MODES.has(mode as string)) throw new InvalidArgumentError(`mode must be one of ${[...CREATE_MODES].join(', ')}, got ${describeValue(mode)}`);
  return mode as CreateMode;
}

export function validateVersion(version: unknown): number {
  if (version === undefined) return -1;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < -1 || version > 0x7fffffff) {
    throw new InvalidArgumentError(`version must be an integer from -1 to 2^31-1, got ${describeValue(version)}`);
  }
  return version;
}

export function validateTtl(ttlMs: unknown, maxTtlMs: number): number {
  if (typeof ttlMs !== 'number' || !Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > maxTtlMs) {
    throw new InvalidArgumentError(`ttlMs must be an integer from 1 to ${maxTtlMs} for the TTL modes, got ${describeValue(ttlMs)}`);
  }
  return ttlMs;
}

export function validateAcl(acl: unknown): void {
  if (!Array.isArray(acl) || acl.length === 0) throw new InvalidArgumentError('acl must be a non-empty array of { perms, scheme, id }');
  for (const a of acl) {
    if (
      typeof a !== 'object' ||
      a === null ||
      !Number.isInteger(a.perms) ||
      a.perms < 0 ||
      a.perms > 31 ||
      typeof a.scheme !== 'string' ||
      typeof a.id !== 'string'
    ) {
      throw new InvalidArgumentError('each ACL entry must be { perms: 0..31, scheme: string, id: string }');
    }
  }
}

export function validateSession(session: unknown): Session | undefined {
  if (session === undefined) return undefined;
  if (!(session instanceof Session)) throw new InvalidArgumentError(`session must be a Session (client.session), got ${describeValue(session)}`);
  return session;
}

export function validateWatcher(watcher: unknown): void {
  if (watcher !== undefined && typeof watcher !== 'function') throw new InvalidArgumentError(`watcher must be a function, got ${describeValue(watcher)}`);
}
