import { hostname } from 'node:os';
import { InvalidArgumentError } from '../errors';
import { DEFAULT_CLIENT_OPTIONS, resolveClientOptions } from './options';

describe('the holder id', () => {
  const connectString = '127.0.0.1:2181';

  it('is <hostname>:<pid> by default, and the data of nodes created without data', () => {
    const o = resolveClientOptions({ connectString });
    expect(o.id).toBe(`${hostname()}:${process.pid}`);
    expect(DEFAULT_CLIENT_OPTIONS.id).toBe(o.id);
    expect(o.defaultData.toString('utf8')).toBe(o.id);
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
