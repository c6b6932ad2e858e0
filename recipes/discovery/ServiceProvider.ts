import { describeValue, InvalidArgumentError, validateFunction, validateOptions } from '../../src/recipeKit';
import { DownInstanceManager, type DownInstancePolicy } from './DownInstanceManager';
import type { ProviderStrategy } from './ProviderStrategy';
import { RoundRobinStrategy } from './RoundRobinStrategy';
import { ServiceCache, type ServiceCacheSource, type ServiceCacheStartOptions } from './ServiceCache';
import type { ServiceInstance, ServicePayload } from './ServiceInstance';

/** Whether a provider may use an instance (Curator's InstanceFilter). */
export type InstanceFilter = (instance: ServiceInstance<ServicePayload>) => boolean;

/** Options of a ServiceProvider. */
export interface ServiceProviderOptions {
  /** How `getInstance()` picks; default a new RoundRobinStrategy. Give each provider its own: strategies keep state. */
  strategy?: ProviderStrategy;
  /** Only instances every filter accepts are used (besides enabled and not down). */
  filters?: readonly InstanceFilter[];
  /** When `noteError` takes an instance out; default Curator's, down for 30 s after 2 errors. */
  downInstancePolicy?: DownInstancePolicy;
  /** The clock of the down-instance policy, in ms; default Date.now. For tests. */
  now?: () => number;
}

/**
 * Picks an instance of one service to call: Curator's ServiceProvider. It keeps a ServiceCache
 * of the service, and `getInstance()` picks with its strategy among the instances that are
 * enabled, not down (see `noteError`) and accepted by every filter, reading nothing from the
 * server. `getAllInstances()` is that list.
 *
 * - **noteError.** Tell the provider an instance failed you: after the policy's `errorThreshold`
 *   errors (default 2) it is down, left out of both lists, until `timeoutMs` (default 30 s) after
 *   its first error. Errors are counted by instance id, per provider.
 * - **SUSPENDED and LOST.** As its cache: the provider keeps picking from the last list seen,
 *   as Curator's does, so calls go on to instances that were there (they may have gone meanwhile:
 *   `noteError` takes failing ones out).
 *
 * @example
 * ```ts
 * await using provider = discovery.serviceProvider('billing', { strategy: new RandomStrategy() });
 * await provider.start({ timeoutMs: 10_000 });
 * const instance = provider.getInstance();
 * if (instance) await call(instance.uriSpec?.build(instance)).catch((err) => { provider.noteError(instance); throw err; });
 * ```
 */
export class ServiceProvider implements AsyncDisposable {
  /** The service's name. */
  readonly name: string;
  /** The cache of the service's instances under this provider. */
  readonly cache: ServiceCache;
  private readonly strategy: ProviderStrategy;
  private readonly filters: readonly InstanceFilter[];
  private readonly down: DownInstanceManager;

  /**
   * Prefer `discovery.serviceProvider(name)`, which closes the provider with the discovery.
   *
   * @throws InvalidArgumentError for a bad name or option (before any I/O).
   */
  constructor(discovery: ServiceCacheSource, name: string, options: ServiceProviderOptions = {}) {
    const o = validateOptions(options, 'options');
    if (o.strategy !== undefined && typeof o.strategy?.getInstance !== 'function') {
      throw new InvalidArgumentError(`strategy must be a ProviderStrategy (with getInstance), got ${describeValue(o.strategy)}`);
    }
    this.strategy = o.strategy ?? new RoundRobinStrategy();
    if (o.filters !== undefined && !Array.isArray(o.filters)) throw new InvalidArgumentError(`filters must be an array of functions, got ${describeValue(o.filters)}`);
    this.filters = Object.freeze((o.filters ?? []).map((f, i) => validateFunction(f, `filters[${i}]`)));
    const now = o.now === undefined ? Date.now : validateFunction(o.now, 'now');
    this.down = new DownInstanceManager(o.downInstancePolicy, now);
    this.cache = new ServiceCache(discovery, name);
    this.name = this.cache.name;
  }

  /** Starts the cache: resolves once the instances are loaded. Starts once; on timeout or abort the provider is closed. */
  async start(options?: ServiceCacheStartOptions): Promise<void> {
    await this.cache.start(options);
  }

  /** An instance to call, picked by the strategy among the usable ones; null when there is none. */
  getInstance(): ServiceInstance<ServicePayload> | null {
    return this.strategy.getInstance(this.getAllInstances());
  }

  /** The usable instances: enabled, not down, and accepted by every filter (Curator's `getAllInstances`). */
  getAllInstances(): ServiceInstance<ServicePayload>[] {
    return this.cache.getInstances().filter((i) => i.enabled && this.down.isUp(i) && this.filters.every((accept) => accept(i)));
  }

  /** Counts an error against an instance; see the down-instance policy. */
  noteError(instance: ServiceInstance<unknown>): void {
    if (typeof instance?.id !== 'string') throw new InvalidArgumentError(`noteError takes a ServiceInstance, got ${describeValue(instance)}`);
    this.down.noteError(instance);
  }

  /** Closes the cache. Idempotent. */
  async close(): Promise<void> {
    await this.cache.close();
  }

  /** `close()`, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
