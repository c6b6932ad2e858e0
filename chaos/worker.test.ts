import { DEFAULT_CLIENT_OPTIONS } from '../src';
import { clientOptions, type WorkerConfig } from './worker';

const CONFIG: WorkerConfig = { index: 0, connectString: '127.0.0.1:2181', registerPort: 1, seed: 1, sessionTimeoutMs: 4_000, policy: 'standard', root: '/chaos' };

describe('the worker client options', () => {
  const supported = 'transport' in DEFAULT_CLIENT_OPTIONS;

  it('leave the transport to the client when none is asked for', () => {
    expect('transport' in clientOptions(CONFIG)).toBe(false);
  });

  it('pass the transport asked for, where the client has the option; refuse any but native where it has not', () => {
    if (supported) {
      expect(clientOptions({ ...CONFIG, transport: 'protocol' })).toMatchObject({ transport: 'protocol' });
      expect(clientOptions({ ...CONFIG, transport: 'native' })).toMatchObject({ transport: 'native' });
    } else {
      expect(() => clientOptions({ ...CONFIG, transport: 'protocol' })).toThrow(/only the native transport/);
      expect('transport' in clientOptions({ ...CONFIG, transport: 'native' })).toBe(false);
    }
  });
});
