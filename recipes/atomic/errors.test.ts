import { ZkError } from '../../src/errors';
import { ExponentialBackoffRetry, isRetryableError, RetryNTimes } from '../../src/retry';
import { AtomicContentionError } from './errors';

describe('AtomicContentionError', () => {
  it('is retryable: every policy may try a lost race again, as Curator lets its atomic values', () => {
    const lost = new AtomicContentionError({ path: '/counter' });
    expect(isRetryableError(lost)).toBe(true);
    expect(new RetryNTimes({ n: 3, sleepMsBetweenRetries: 10 }).allowRetry(0, 0, lost)).toBe(10);
    expect(new ExponentialBackoffRetry({ baseSleepMs: 10, maxRetries: 3 }).allowRetry(2, 0, lost)).not.toBe(false);
  });

  it('marks only its own instances: other library codes stay final', () => {
    expect(isRetryableError(new ZkError('BAD_DATA', 'bad'))).toBe(false);
  });
});
