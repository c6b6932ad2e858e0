import type { ProviderStrategy } from './ProviderStrategy';
import type { ServiceInstance, ServicePayload } from './ServiceInstance';

/** Each call takes an instance at random, each equally likely (Curator's RandomStrategy). */
export class RandomStrategy implements ProviderStrategy {
  private readonly random: () => number;

  /** `random` returns a number in [0, 1); default Math.random. */
  constructor(random: () => number = Math.random) {
    this.random = random;
  }

  /** An instance at random; null for an empty list. */
  getInstance<T = ServicePayload>(instances: readonly ServiceInstance<T>[]): ServiceInstance<T> | null {
    if (instances.length === 0) return null;
    return instances[Math.min(instances.length - 1, Math.floor(this.random() * instances.length))];
  }
}
