/**
 * Which transport a client uses. The protocol transport is ours and always there; the native one
 * needs the optional `zookeeper` binding, which is loaded here, on demand, and nowhere else.
 */
import { UnsupportedError } from '../errors';
import { createProtocolTransport } from '../protocol/ProtocolTransport';
import type { TransportFactory } from '../transport/Transport';

/** 'protocol' (the default: ZooKeeper's protocol in TypeScript) or 'native' (the C client's binding). */
export type TransportName = 'protocol' | 'native';

export const TRANSPORT_NAMES: readonly TransportName[] = Object.freeze(['protocol', 'native']);

let nativeFactory: TransportFactory | undefined;

/**
 * The factory of the named transport. Choosing 'native' loads the `zookeeper` binding now.
 *
 * @throws UnsupportedError when 'native' is chosen and the binding is not installed (naming
 *   `npm install zookeeper`) or not built (naming `npm rebuild zookeeper`).
 */
export function transportFactory(name: TransportName): TransportFactory {
  if (name === 'protocol') return createProtocolTransport;
  if (nativeFactory === undefined) {
    try {
      // Loaded only here, and only now: the binding is an optional peer dependency, missing unless
      // the user installed it, or unbuilt (no compiler, install scripts blocked), and the default
      // transport needs none of it.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      nativeFactory = (require('../transport/NativeTransport') as typeof import('../transport/NativeTransport')).createNativeTransport;
    } catch (err) {
      const missing = (err as NodeJS.ErrnoException)?.code === 'MODULE_NOT_FOUND' && /'zookeeper'/.test((err as Error).message);
      throw new UnsupportedError(
        "transport 'native' needs the optional `zookeeper` package (the ZooKeeper C client's binding), " +
          (missing
            ? 'which is not installed: install it with `npm install zookeeper` (it compiles C on install: python3, make and g++ are needed)'
            : 'which is installed but not built: build it with `npm rebuild zookeeper` (python3, make and g++ are needed)') +
          `; or use transport 'protocol', which needs neither. (${(err as Error)?.message ?? String(err)})`,
        { cause: err },
      );
    }
  }
  return nativeFactory;
}
