import { randomUUID } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { describeValue, InvalidArgumentError, validateBoolean, validateOptions, validateString } from '../../src/recipeKit';
import { UriSpec } from './UriSpec';

/**
 * How an instance's node lives, Curator's `ServiceType`: DYNAMIC is an ephemeral node, kept
 * through new sessions; DYNAMIC_SEQUENTIAL the same with a sequence number after the id; STATIC
 * and PERMANENT are persistent nodes.
 */
export type ServiceType = 'DYNAMIC' | 'STATIC' | 'PERMANENT' | 'DYNAMIC_SEQUENTIAL';

/** The service types, as Curator spells them in the JSON. */
export const SERVICE_TYPES: readonly ServiceType[] = Object.freeze(['DYNAMIC', 'STATIC', 'PERMANENT', 'DYNAMIC_SEQUENTIAL']);

/** A JSON value, as a payload holds. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A payload: a JSON object. One read from a Java service keeps its `@class` property. */
export type ServicePayload = { [key: string]: JsonValue };

/**
 * One instance of a service, the fields of Curator's `ServiceInstance`. Frozen; build one with
 * `createServiceInstance`.
 */
export interface ServiceInstance<T = ServicePayload> {
  readonly name: string;
  readonly id: string;
  readonly address: string | null;
  readonly port: number | null;
  readonly sslPort: number | null;
  readonly payload: T | null;
  /** Milliseconds since the epoch. */
  readonly registrationTimeUTC: number;
  readonly serviceType: ServiceType;
  readonly uriSpec: UriSpec | null;
  readonly enabled: boolean;
}

/** Options of `createServiceInstance`; only `name` is required. */
export interface ServiceInstanceOptions<T = ServicePayload> {
  /** The service's name: one node name under the discovery's base path. */
  name: string;
  /** Default: a random UUID, as Curator's builder. */
  id?: string;
  /** Default: the first non-loopback IPv4 address of the host's interfaces (`localIpAddress()`). */
  address?: string | null;
  port?: number | null;
  sslPort?: number | null;
  payload?: T | null;
  /** Default: now. */
  registrationTimeUTC?: number;
  /** Default 'DYNAMIC'. */
  serviceType?: ServiceType;
  /** A template (`'{scheme}://{address}:{port}'`) or a UriSpec. */
  uriSpec?: UriSpec | string | null;
  /** Default true. */
  enabled?: boolean;
}

/**
 * The host's first non-loopback IPv4 address, in the order of `os.networkInterfaces()`; undefined
 * when it has none.
 */
export function localIpAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) {
      if (a.family === 'IPv4' && !a.internal) return a.address;
    }
  }
  return undefined;
}

/** Checks a node name for a service name or an instance id. */
export function validateNodeName(value: unknown, what: string): string {
  const name = validateString(value, what);
  if (name.includes('/') || name === '.' || name === '..' || name.includes('\u0000')) {
    throw new InvalidArgumentError(`${what} must be one node name (no '/'), got ${JSON.stringify(name)}`);
  }
  return name;
}

function validatePort(value: unknown, what: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0x7fffffff) {
    throw new InvalidArgumentError(`${what} must be a non-negative 32-bit integer, got ${describeValue(value)}`);
  }
  return value;
}

/** Checks a payload: null, or a JSON object (not an array). */
export function validatePayload<T>(value: T | null | undefined, what = 'payload'): T | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError(`${what} must be a JSON object or null (Curator's JSON carries its class in it), got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Builds a frozen ServiceInstance with the defaults of Curator's `ServiceInstanceBuilder`: a
 * random UUID id, the host's address, now as registration time, DYNAMIC, enabled.
 *
 * @throws InvalidArgumentError for a bad field (before any I/O).
 */
export function createServiceInstance<T = ServicePayload>(options: ServiceInstanceOptions<T>): ServiceInstance<T> {
  const o = validateOptions(options, 'options');
  const name = validateNodeName(o.name, 'name');
  const id = o.id === undefined ? randomUUID() : validateNodeName(o.id, 'id');
  const address = o.address === undefined ? (localIpAddress() ?? null) : o.address === null ? null : validateString(o.address, 'address');
  const registrationTimeUTC = o.registrationTimeUTC ?? Date.now();
  if (typeof registrationTimeUTC !== 'number' || !Number.isSafeInteger(registrationTimeUTC)) {
    throw new InvalidArgumentError(`registrationTimeUTC must be an integer (ms since the epoch), got ${describeValue(registrationTimeUTC)}`);
  }
  const serviceType = o.serviceType ?? 'DYNAMIC';
  if (!SERVICE_TYPES.includes(serviceType)) {
    throw new InvalidArgumentError(`serviceType must be one of ${SERVICE_TYPES.join(', ')}, got ${describeValue(serviceType)}`);
  }
  let uriSpec: UriSpec | null = null;
  if (o.uriSpec instanceof UriSpec) uriSpec = o.uriSpec;
  else if (o.uriSpec !== undefined && o.uriSpec !== null) uriSpec = new UriSpec(o.uriSpec);
  return Object.freeze({
    name,
    id,
    address,
    port: validatePort(o.port, 'port'),
    sslPort: validatePort(o.sslPort, 'sslPort'),
    payload: validatePayload(o.payload),
    registrationTimeUTC,
    serviceType,
    uriSpec,
    enabled: o.enabled === undefined ? true : validateBoolean(o.enabled, 'enabled'),
  });
}
