import { hostname } from 'node:os';
import { InvalidArgumentError, UnsupportedError } from '../errors';
import { createProtocolTransport } from '../protocol/ProtocolTransport';
import { DEFAULT_CLIENT_OPTIONS, resolveClientOptions } from './options';

describe('the holder id', () => {
  const connectString = '127.0.0.1:2181';

  it('is <hostname>:<pid> by default, and the data of nodes created without data', () => {
    const o = resolveClientOptions({ connectString });
    expect(o.id).toBe(`${hostname()}:${process.pid}`);
    expect(DEFAULT_CLIENT_OPTIONS.id).toBe(o.id);
    expect(o.defaultData.toString('utf8')).toBe(o.id);
  });

  it('shares its defaults between clients: one defaultData and one empty authInfo per process', () => {
    // Each of ten thousand idle clients would otherwise keep a Buffer and an array of its own.
    const [a, b] = [resolveClientOptions({ connectString }), resolveClientOptions({ connectString })];
    expect(a.defaultData).toBe(DEFAULT_CLIENT_OPTIONS.defaultData);
    expect(b.defaultData).toBe(a.defaultData);
    expect(a.authInfo).toBe(DEFAULT_CLIENT_OPTIONS.authInfo);
    expect(resolveClientOptions({ connectString, authInfo: [] }).authInfo).toBe(DEFAULT_CLIENT_OPTIONS.authInfo);
    expect(Object.isFrozen(a.authInfo)).toBe(true);
  });

  it('is the id option when given, and defaultData follows it', () => {
    const o = resolveClientOptions({ connectString, id: 'billing-7' });
    expect(o.id).toBe('billing-7');
    expect(o.defaultData.toString('utf8')).toBe('billing-7');
  });

  it('gives way to defaultData for the data, as Curator reads bytes', () => {
    const o = resolveClientOptions({ connectString, id: 'billing-7', defaultData: Buffer.from([1, 2, 3]) });
    expect(o.id).toBe('billing-7');
    expect([...o.defaultData]).toEqual([1, 2, 3]);
  });

  it('must be a non-empty string', () => {
    expect(() => resolveClientOptions({ connectString, id: '' })).toThrow(InvalidArgumentError);
    expect(() => resolveClientOptions({ connectString, id: 7 as unknown as string })).toThrow(/id must be a string, got 7/);
  });
});

describe('client options: the transport', () => {
  const ok = { connectString: '127.0.0.1:2181' };

  it('uses the protocol transport by default', () => {
    const resolved = resolveClientOptions(ok);
    expect(resolved.transport).toBe('protocol');
    expect(resolved.transportFactory).toBe(createProtocolTransport);
  });

  it("loads the native transport only when asked to; transportFactory overrides both", () => {
    const factory = () => {
      throw new Error('not called');
    };
    expect(resolveClientOptions({ ...ok, transport: 'native', transportFactory: factory }).transportFactory).toBe(factory);
    expect(resolveClientOptions({ ...ok, transport: 'native' }).transportFactory).not.toBe(createProtocolTransport);
  });

  it('refuses an unknown transport, and TLS or a frame limit on the native one, before any I/O', () => {
    expect(() => resolveClientOptions({ ...ok, transport: 'java' as never })).toThrow(InvalidArgumentError);
    expect(() => resolveClientOptions({ ...ok, transport: 'native', tls: {} })).toThrow(UnsupportedError);
    expect(() => resolveClientOptions({ ...ok, transport: 'native', maxFrameBytes: 4096 })).toThrow(UnsupportedError);
    expect(() => resolveClientOptions({ ...ok, tls: 'yes' as never })).toThrow(InvalidArgumentError);
    expect(() => resolveClientOptions({ ...ok, maxFrameBytes: 10 })).toThrow(InvalidArgumentError);
    expect(resolveClientOptions({ ...ok, maxFrameBytes: 4096, tls: { servername: 'zk' } })).toMatchObject({ maxFrameBytes: 4096, tls: { servername: 'zk' } });
  });
});
