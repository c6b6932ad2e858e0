import type { ProviderStrategy } from './ProviderStrategy';
import { RoundRobinStrategy } from './RoundRobinStrategy';
import type { ServiceInstance, ServicePayload } from './ServiceInstance';

/**
 * Keeps returning one instance while it is in the list, and picks another with its master
 * strategy (default round-robin) once it is gone: Curator's StickyStrategy. An instance is the
 * same while its id is, so an updated instance (a new port, a new payload) is kept, and returned
 * as it is now. An instance that `noteError` marks down leaves the provider's list, so the
 * provider moves on from it.
 */
export class StickyStrategy implements ProviderStrategy {
  private readonly master: ProviderStrategy;
  private ours: string | undefined;
  private picks = 0;

  constructor(master: ProviderStrategy = new RoundRobinStrategy()) {
    this.master = master;
  }

  /** How many times an instance was picked anew (Curator's `getInstanceNumber`): 1 after the first pick, and one more at each move. */
  get instanceNumber(): number {
    return this.picks;
  }

  /** The instance kept, if it is still in the list; else one picked by the master strategy (null for an empty list). */
  getInstance<T = ServicePayload>(instances: readonly ServiceInstance<T>[]): ServiceInstance<T> | null {
    const kept = this.ours === undefined ? undefined : instances.find((i) => i.id === this.ours);
    if (kept) return kept;
    const picked = this.master.getInstance(instances);
    this.ours = picked?.id;
    if (picked) this.picks++;
    return picked;
  }
}
