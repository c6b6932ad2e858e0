import { InvalidArgumentError } from '../../src/errors';
import { DOWN_INSTANCE_POLICY_DEFAULTS, DownInstanceManager } from './DownInstanceManager';
import type { ProviderStrategy } from './ProviderStrategy';
import { RandomStrategy } from './RandomStrategy';
import { RoundRobinStrategy } from './RoundRobinStrategy';
import { createServiceInstance, type ServiceInstance } from './ServiceInstance';
import { StickyStrategy } from './StickyStrategy';

const instance = (id: string, port = 1) => createServiceInstance({ name: 'api', id, port, address: '10.0.0.1' });
const list = (...ids: string[]) => ids.map((id) => instance(id));
const pick = (strategy: ProviderStrategy, instances: readonly ServiceInstance[], n: number) => Array.from({ length: n }, () => strategy.getInstance(instances)?.id ?? null);

describe('provider strategies', () => {
  it('each returns null for an empty list', () => {
    for (const strategy of [new RoundRobinStrategy(), new RandomStrategy(), new StickyStrategy()]) expect(strategy.getInstance([])).toBeNull();
  });

  it('round-robin goes round, and goes on from the same place when the list shrinks', () => {
    const rr = new RoundRobinStrategy();
    expect(pick(rr, list('a', 'b', 'c'), 4)).toEqual(['a', 'b', 'c', 'a']);
    expect(pick(rr, list('a', 'b'), 3)).toEqual(['b', 'a', 'b']);
  });

  it('random maps [0, 1) onto the list, the top end included', () => {
    const rolls = [0, 0.3334, 0.9999999999999999];
    expect(pick(new RandomStrategy(() => rolls.shift() as number), list('a', 'b', 'c'), 3)).toEqual(['a', 'b', 'c']);
  });

  it('sticky keeps its instance by id, returns it as it is now, and counts each new pick', () => {
    const sticky = new StickyStrategy(new RoundRobinStrategy());
    expect(pick(sticky, list('a', 'b'), 2)).toEqual(['a', 'a']);
    expect(sticky.getInstance([instance('b'), instance('a', 2)])).toMatchObject({ id: 'a', port: 2 });
    expect(sticky.instanceNumber).toBe(1);
    expect(pick(sticky, list('b', 'c'), 2)).toEqual(['c', 'c']);
    expect(sticky.instanceNumber).toBe(2);
    expect(sticky.getInstance([])).toBeNull();
    expect(sticky.getInstance(list('b'))?.id).toBe('b');
    expect(sticky.instanceNumber).toBe(3);
  });
});

describe('DownInstanceManager', () => {
  it("Curator's defaults: down after 2 errors, for 30 s from the first", () => {
    let now = 0;
    const down = new DownInstanceManager(undefined, () => now);
    const a = instance('a');
    down.noteError(a);
    now = 20_000;
    expect(down.isUp(a)).toBe(true);
    down.noteError(a);
    expect(down.isUp(a)).toBe(false);
    expect(down.isUp(instance('b'))).toBe(true);
    now = DOWN_INSTANCE_POLICY_DEFAULTS.timeoutMs - 1;
    expect(down.isUp(a)).toBe(false);
    now = DOWN_INSTANCE_POLICY_DEFAULTS.timeoutMs;
    expect(down.isUp(a)).toBe(true);
  });

  it('refuses a bad policy', () => {
    for (const policy of [{ errorThreshold: 0 }, { errorThreshold: 1.5 }, { timeoutMs: -1 }, { timeoutMs: Infinity }, { timeoutMs: 'x' }]) {
      expect(() => new DownInstanceManager(policy as never, Date.now)).toThrow(InvalidArgumentError);
    }
  });
});
