import { InvalidArgumentError, UnsupportedError } from '../errors';
import { createProtocolTransport } from '../protocol/ProtocolTransport';
import { resolveClientOptions } from './options';

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
