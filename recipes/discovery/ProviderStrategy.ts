import type { ServiceInstance, ServicePayload } from './ServiceInstance';

/**
 * How a ServiceProvider picks one instance among those it may use (Curator's ProviderStrategy).
 * A strategy may keep state (a position, a choice), so give each provider its own.
 */
export interface ProviderStrategy {
  /** One of `instances` (the provider's list, already filtered), or null when it is empty. */
  getInstance<T = ServicePayload>(instances: readonly ServiceInstance<T>[]): ServiceInstance<T> | null;
}
