import { InvalidArgumentError } from '../../src/errors';
import { JsonInstanceSerializer } from './JsonInstanceSerializer';
import { ServiceInstanceFormatError } from './errors';
import { createServiceInstance } from './ServiceInstance';
import { UriSpec } from './UriSpec';

// The golden strings are what Curator 5.4's JsonInstanceSerializer wrote for the same instances
// (a Java payload class `Details { String description; int weight; }`, and a LinkedHashMap).
const CURATOR_FULL =
  '{"name":"api","id":"id-1","address":"10.0.0.1","port":8080,"sslPort":8443,' +
  '"payload":{"@class":"Probe$Details","description":"hi é \\"q\\" <>&/","weight":3},' +
  '"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},' +
  '{"value":"://foo.com:","variable":false},{"value":"port","variable":true},{"value":"/x","variable":false},{"value":"custom","variable":true}]}}';
const CURATOR_MAP_NOT_COMPATIBLE =
  '{"name":"api","id":"id-3","address":"10.0.0.2","port":null,"sslPort":null,"payload":{"@class":"java.util.LinkedHashMap","a":1,"b":"x"},' +
  '"registrationTimeUTC":5,"serviceType":"DYNAMIC","uriSpec":null,"enabled":false}';
const CURATOR_BARE = '{"name":"api","id":"id-2","address":"10.0.0.2","port":null,"sslPort":null,"payload":null,"registrationTimeUTC":5,"serviceType":"DYNAMIC","uriSpec":null}';

const full = () =>
  createServiceInstance({
    name: 'api',
    id: 'id-1',
    address: '10.0.0.1',
    port: 8080,
    sslPort: 8443,
    payload: { '@class': 'Probe$Details', description: 'hi é "q" <>&/', weight: 3 },
    registrationTimeUTC: 1_700_000_000_000,
    uriSpec: '{scheme}://foo.com:{port}/x{custom}',
  });

describe('JsonInstanceSerializer', () => {
  it('writes the bytes Curator writes, in compatible mode (no enabled) by default', () => {
    expect(new JsonInstanceSerializer().serialize(full()).toString('utf8')).toBe(CURATOR_FULL);
    const bare = createServiceInstance({ name: 'api', id: 'id-2', address: '10.0.0.2', registrationTimeUTC: 5 });
    expect(new JsonInstanceSerializer().serialize(bare).equals(Buffer.from(CURATOR_BARE, 'utf8'))).toBe(true);
  });

  it('writes enabled last outside compatible mode, and a Node payload with the configured class first', () => {
    const instance = createServiceInstance({ name: 'api', id: 'id-3', address: '10.0.0.2', registrationTimeUTC: 5, enabled: false, payload: { a: 1, b: 'x' } });
    expect(new JsonInstanceSerializer({ compatibleSerializationMode: false }).serialize(instance).toString('utf8')).toBe(CURATOR_MAP_NOT_COMPATIBLE);
    const custom = new JsonInstanceSerializer({ payloadClass: 'com.example.Details' }).serialize({ ...instance, payload: { b: 'x', '@class': 'kept.First' } });
    expect(custom.toString('utf8')).toContain('"payload":{"@class":"kept.First","b":"x"}');
    const ours = new JsonInstanceSerializer({ payloadClass: 'com.example.Details' }).serialize({ ...instance, payload: { n: 1 } });
    expect(ours.toString('utf8')).toContain('"payload":{"@class":"com.example.Details","n":1}');
  });

  it('escapes strings as Jackson does (upper-case hex, DEL and / as is)', () => {
    const instance = createServiceInstance({ name: 'api', id: 'x', address: null, registrationTimeUTC: 0, payload: { s: '\u0001\t\n\u001f\\"/\u007f' } });
    expect(new JsonInstanceSerializer().serialize(instance).toString('utf8')).toContain('"s":"\\u0001\\t\\n\\u001F\\\\\\"/\u007f"');
  });

  it("reads Curator's JSON back field for field, @class kept, and writes it back byte for byte", () => {
    const serializer = new JsonInstanceSerializer();
    const read = serializer.deserialize(Buffer.from(CURATOR_FULL, 'utf8'));
    expect(read).toMatchObject({ name: 'api', id: 'id-1', address: '10.0.0.1', port: 8080, sslPort: 8443, registrationTimeUTC: 1_700_000_000_000, serviceType: 'DYNAMIC', enabled: true });
    expect(read.payload).toEqual({ '@class': 'Probe$Details', description: 'hi é "q" <>&/', weight: 3 });
    expect(read.uriSpec?.toString()).toBe('{scheme}://foo.com:{port}/x{custom}');
    expect(serializer.serialize(read).toString('utf8')).toBe(CURATOR_FULL);
    expect(new JsonInstanceSerializer({ compatibleSerializationMode: false }).serialize(serializer.deserialize(Buffer.from(CURATOR_MAP_NOT_COMPATIBLE))).toString()).toBe(
      CURATOR_MAP_NOT_COMPATIBLE,
    );
    expect(serializer.deserialize(Buffer.from('{"name":"a","id":"b","unknown":[1]}')).enabled).toBe(true);
  });

  it('refuses data that is not an instance, and payloads JSON cannot carry, with typed errors', () => {
    const serializer = new JsonInstanceSerializer();
    expect(() => serializer.deserialize(Buffer.from('not json'))).toThrow(ServiceInstanceFormatError);
    expect(() => serializer.deserialize(Buffer.from('{"id":"b"}'))).toThrow(ServiceInstanceFormatError);
    expect(() => serializer.deserialize(Buffer.from('{"name":"a","id":"b","port":"80"}'))).toThrow(ServiceInstanceFormatError);
    expect(() => serializer.deserialize(Buffer.from('{"name":"a","id":"b","serviceType":"OTHER"}'))).toThrow(ServiceInstanceFormatError);
    expect(() => serializer.serialize({ ...full(), payload: { n: Number.NaN } })).toThrow(InvalidArgumentError);
    expect(() => createServiceInstance({ name: 'api', payload: [1] as never })).toThrow(InvalidArgumentError);
    expect(() => createServiceInstance({ name: 'a/b' })).toThrow(InvalidArgumentError);
    expect(() => createServiceInstance({ name: 'api', port: 70.5 })).toThrow(InvalidArgumentError);
  });

  it("has Curator's builder defaults", () => {
    const before = Date.now();
    const instance = createServiceInstance({ name: 'api' });
    expect(instance.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(instance).toMatchObject({ port: null, sslPort: null, payload: null, serviceType: 'DYNAMIC', uriSpec: null, enabled: true });
    expect(instance.registrationTimeUTC).toBeGreaterThanOrEqual(before);
    expect(Object.isFrozen(instance)).toBe(true);
  });
});

describe('UriSpec', () => {
  const instance = createServiceInstance({ name: 'api', id: 'id-1', address: '10.0.0.1', port: 8080, registrationTimeUTC: 17, serviceType: 'STATIC' });

  it('builds as Curator builds', () => {
    // Curator's output for the same template, instance and variables.
    const variables = { custom: 'a b/é', port: '99', n: 5 };
    expect(new UriSpec('{scheme}|{registration-time-utc}|{service-type}|{open-brace}|{close-brace}|{custom}|{port}|{n}|{ssl-port}').build(instance, variables)).toBe(
      'http|17|static|||a b/é|99|5|',
    );
    expect(new UriSpec('{scheme}|{port}|{custom}').build(null, variables)).toBe('http|99|a b/é');
    expect(new UriSpec('{[}x{]}').build(instance)).toBe('{x}');
    expect(new UriSpec('{scheme}://{address}:{port}').build({ ...instance, sslPort: 8443 })).toBe('https://10.0.0.1:8080');
    expect(new UriSpec('http://{address}:{ssl-port}/{name}/{id}/{unknown}').build({ ...instance, sslPort: 8443 })).toBe('http://10.0.0.1:8443/api/id-1/');
  });

  it("keeps Curator's parts and refuses what Curator refuses", () => {
    expect(new UriSpec('a{}b').parts).toEqual([
      { value: 'a', variable: false },
      { value: 'b', variable: false },
    ]);
    expect(new UriSpec('').parts).toEqual([]);
    expect(() => new UriSpec('a{b')).toThrow(InvalidArgumentError);
    expect(() => new UriSpec('a}b')).toThrow(InvalidArgumentError);
    expect(() => new UriSpec('{a{b}}')).toThrow(InvalidArgumentError);
  });
});
