/**
 * Which transport a client uses. The protocol transport is ours and always there; the native one
 * needs the optional `zookeeper` binding, which is loaded here, on demand, and nowhere else.
 */
import { UnsupportedError } from '../errors';
import { createProtocolTransport } from '../protocol/ProtocolTransport';
import type { TransportFactory } from './Transport';

/** 'protocol' (the default: ZooKeeper's protocol in TypeScript) or 'native' (the C client's binding). */
export type TransportName = 'protocol' | 'native';

export const TRANSPORT_NAMES: readonly TransportName[] = Object.freeze(['protocol', 'native']);

let nativeFactory: TransportFactory | undefined;

/**
 * The factory of the named transport. Choosing 'native' loads the `zookeeper` binding now.
 *
 * @throws UnsupportedError when 'native' is chosen and the binding is not installed or not built,
 *   saying how to build it.
 */
export function transportFactory(name: TransportName): TransportFactory {
  if (name === 'protocol') return createProtocolTransport;
  if (nativeFactory === undefined) {
    try {
      // Loaded only here, and only now: the binding is an optional dependency that may be missing
      // or unbuilt (no compiler, install scripts blocked), and the default transport needs none of it.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      nativeFactory = (require('./NativeTransport') as typeof import('./NativeTransport')).createNativeTransport;
    } catch (err) {
      throw new UnsupportedError(
        "transport 'native' needs the optional `zookeeper` package (the ZooKeeper C client's binding), " +
          'which is not installed or not built. Build it with `npm rebuild zookeeper` (it compiles C: python3, ' +
          "make and g++ are needed), or install it with `npm install zookeeper`; or use transport 'protocol', " +
          `which needs neither. (${(err as Error)?.message ?? String(err)})`,
        { cause: err },
      );
    }
  }
  return nativeFactory;
}
