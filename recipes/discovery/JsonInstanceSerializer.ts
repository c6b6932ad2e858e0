import { describeValue, InvalidArgumentError, validateBoolean, validateOptions, validateString } from '../../src/recipeKit';
import { ServiceInstanceFormatError } from './errors';
import { SERVICE_TYPES, validatePayload, type JsonValue, type ServiceInstance, type ServicePayload, type ServiceType } from './ServiceInstance';
import { UriSpec, type UriSpecPart } from './UriSpec';

/** Options of a JsonInstanceSerializer. */
export interface JsonInstanceSerializerOptions {
  /**
   * The Java class named in the `@class` property of a payload that has none: the class Curator's
   * readers deserialize it into. Default 'java.util.LinkedHashMap', which a Curator
   * `ServiceDiscovery<Map>` reads.
   */
  payloadClass?: string;
  /**
   * Curator's `compatibleSerializationMode`, true by default as in Curator 5.4: the JSON has no
   * `enabled` field (readers take it as true). False writes `enabled` last.
   */
  compatibleSerializationMode?: boolean;
}

/** The defaults of JsonInstanceSerializerOptions, frozen. */
export const JSON_INSTANCE_SERIALIZER_DEFAULTS = Object.freeze({
  payloadClass: 'java.util.LinkedHashMap',
  compatibleSerializationMode: true,
});

const HEX = '0123456789ABCDEF';

/** A JSON string as Jackson writes it: `"` and `\` escaped, control characters as \n or \u00XX (upper-case hex), the rest as is. */
function jsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c >= 0x20) out += s[i];
    else if (c === 0x08) out += '\\b';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0c) out += '\\f';
    else if (c === 0x0d) out += '\\r';
    else out += `\\u00${HEX[c >> 4]}${HEX[c & 15]}`;
  }
  return `${out}"`;
}

function jsonValue(value: unknown, where: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return jsonString(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new InvalidArgumentError(`${where} must be a finite number, got ${value}`);
      return JSON.stringify(value);
    case 'object':
      if (Array.isArray(value)) return `[${value.map((v, i) => jsonValue(v, `${where}[${i}]`)).join(',')}]`;
      return jsonObject(Object.entries(value), where);
    default:
      throw new InvalidArgumentError(`${where} must be JSON, got ${describeValue(value)}`);
  }
}

function jsonObject(entries: [string, unknown][], where: string): string {
  return `{${entries
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${jsonString(k)}:${jsonValue(v, `${where}.${k}`)}`)
    .join(',')}}`;
}

/**
 * Curator's `JsonInstanceSerializer`, byte for byte: the fields in Curator's order (name, id,
 * address, port, sslPort, payload, registrationTimeUTC, serviceType, uriSpec, then enabled
 * unless in compatible mode), strings escaped as Jackson escapes them, and the payload with its
 * `@class` type property first, which Curator's Jackson needs to read it.
 *
 * A payload read from a Java service keeps its `@class` and is written back with it; a Node
 * payload without one gets `payloadClass`.
 */
export class JsonInstanceSerializer {
  readonly payloadClass: string;
  readonly compatibleSerializationMode: boolean;

  constructor(options: JsonInstanceSerializerOptions = {}) {
    const o = validateOptions(options, 'options');
    this.payloadClass = o.payloadClass === undefined ? JSON_INSTANCE_SERIALIZER_DEFAULTS.payloadClass : validateString(o.payloadClass, 'payloadClass');
    this.compatibleSerializationMode =
      o.compatibleSerializationMode === undefined
        ? JSON_INSTANCE_SERIALIZER_DEFAULTS.compatibleSerializationMode
        : validateBoolean(o.compatibleSerializationMode, 'compatibleSerializationMode');
  }

  /**
   * The instance as Curator writes it, UTF-8.
   *
   * @throws InvalidArgumentError for a payload that is not a JSON object, or holds something JSON cannot.
   */
  serialize(instance: ServiceInstance<ServicePayload>): Buffer {
    const payload = validatePayload(instance.payload);
    let payloadJson = 'null';
    if (payload !== null) {
      const cls = payload['@class'];
      if (cls !== undefined && typeof cls !== 'string') throw new InvalidArgumentError(`payload['@class'] must be a string, got ${describeValue(cls)}`);
      const rest = Object.entries(payload).filter(([k]) => k !== '@class');
      payloadJson = jsonObject([['@class', cls ?? this.payloadClass], ...rest], 'payload');
    }
    const uriSpec = instance.uriSpec === null ? 'null' : `{"parts":[${instance.uriSpec.parts.map((p) => `{"value":${jsonString(p.value)},"variable":${p.variable}}`).join(',')}]}`;
    const fields = [
      `"name":${jsonString(instance.name)}`,
      `"id":${jsonString(instance.id)}`,
      `"address":${instance.address === null ? 'null' : jsonString(instance.address)}`,
      `"port":${instance.port ?? 'null'}`,
      `"sslPort":${instance.sslPort ?? 'null'}`,
      `"payload":${payloadJson}`,
      `"registrationTimeUTC":${instance.registrationTimeUTC}`,
      `"serviceType":${jsonString(instance.serviceType)}`,
      `"uriSpec":${uriSpec}`,
    ];
    if (!this.compatibleSerializationMode) fields.push(`"enabled":${instance.enabled}`);
    return Buffer.from(`{${fields.join(',')}}`, 'utf8');
  }

  /**
   * An instance from its node's data, as Curator reads it: unknown fields are ignored, a missing
   * `enabled` is true, a missing field is null (0 for the registration time).
   *
   * @throws ServiceInstanceFormatError when the data is not an instance's JSON.
   */
  deserialize(data: Buffer | Uint8Array, path?: string): ServiceInstance<ServicePayload> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
    } catch (err) {
      throw new ServiceInstanceFormatError('a service instance node does not hold JSON', { path, cause: err });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ServiceInstanceFormatError('a service instance must be a JSON object', { path });
    const j = parsed as Record<string, unknown>;
    const bad = (field: string): never => {
      throw new ServiceInstanceFormatError(`bad field ${field} in a service instance: ${describeValue(j[field])}`, { path });
    };
    const str = (field: string): string | null => (j[field] === undefined || j[field] === null ? null : typeof j[field] === 'string' ? j[field] : bad(field));
    const int = (field: string): number | null =>
      j[field] === undefined || j[field] === null ? null : typeof j[field] === 'number' && Number.isInteger(j[field]) ? j[field] : bad(field);
    const name = str('name') ?? bad('name');
    const id = str('id') ?? bad('id');
    const serviceType = str('serviceType') ?? 'DYNAMIC';
    if (!SERVICE_TYPES.includes(serviceType as ServiceType)) bad('serviceType');
    let payload: ServicePayload | null = null;
    if (j.payload !== undefined && j.payload !== null) {
      if (typeof j.payload !== 'object' || Array.isArray(j.payload)) bad('payload');
      payload = j.payload as { [key: string]: JsonValue };
    }
    let uriSpec: UriSpec | null = null;
    if (j.uriSpec !== undefined && j.uriSpec !== null) {
      const parts = (j.uriSpec as { parts?: unknown }).parts;
      if (typeof j.uriSpec !== 'object' || !Array.isArray(parts)) bad('uriSpec');
      const checked = (parts as unknown[]).map((p): UriSpecPart => {
        const part = p as Partial<UriSpecPart> | null;
        if (typeof part?.value !== 'string' || typeof part.variable !== 'boolean') bad('uriSpec');
        return { value: part!.value!, variable: part!.variable! };
      });
      uriSpec = UriSpec.fromParts(checked);
    }
    const enabled = j.enabled === undefined || j.enabled === null ? true : typeof j.enabled === 'boolean' ? j.enabled : bad('enabled');
    return Object.freeze({
      name,
      id,
      address: str('address'),
      port: int('port'),
      sslPort: int('sslPort'),
      payload,
      registrationTimeUTC: int('registrationTimeUTC') ?? 0,
      serviceType: serviceType as ServiceType,
      uriSpec,
      enabled,
    });
  }
}
