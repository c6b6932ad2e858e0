import type { ProviderStrategy } from './ProviderStrategy';
import type { ServiceInstance, ServicePayload } from './ServiceInstance';

/**
 * Each call takes the next instance of the list, wrapping around (Curator's RoundRobinStrategy):
 * over a list that does not change, every instance is picked in turn. The position is a counter,
 * not an instance: when the list changes, the turn goes on from the same index.
 */
export class RoundRobinStrategy implements ProviderStrategy {
  private index = 0;

  /** The instance after the one picked last time (the first one the first time); null for an empty list. */
  getInstance<T = ServicePayload>(instances: readonly ServiceInstance<T>[]): ServiceInstance<T> | null {
    if (instances.length === 0) return null;
    const at = this.index % instances.length;
    // Wrapping at the length keeps the counter small and the turn unchanged.
    this.index = at + 1;
    return instances[at];
  }
}
