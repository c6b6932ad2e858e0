import debug from 'debug';
import {
  abortReason,
  Deadline,
  DeadlineScope,
  IllegalStateError,
  InvalidArgumentError,
  isZkError,
  joinPath,
  TimeoutError,
  validateClient,
  validateOptions,
  validateRecipePath,
  validateSignal,
  validateTimeout,
  waitFor,
  type ZkClient,
} from '../../src/recipeKit';
import { PersistentNode, type PersistentNodeWaitOptions } from '../nodes/PersistentNode';
import { JsonInstanceSerializer } from './JsonInstanceSerializer';
import { ServiceCache } from './ServiceCache';
import { validateNodeName, type ServiceInstance, type ServicePayload } from './ServiceInstance';
import { ServiceProvider, type ServiceProviderOptions } from './ServiceProvider';

const log = debug('zk-recipes:discovery');

/** How long unregistering a persistent instance waits for the server to confirm the delete before leaving it to the background. */
const DELETE_WAIT_MS = 1_000;

/** Options of a ServiceDiscovery. */
export interface ServiceDiscoveryOptions {
  /** Reads and writes the instances' JSON; default a JsonInstanceSerializer with Curator's defaults. */
  serializer?: JsonInstanceSerializer;
  /** An instance registered by `start()`, as Curator's `thisInstance`. */
  thisInstance?: ServiceInstance<ServicePayload>;
}

/** Options of the calls of a ServiceDiscovery that wait for the server. */
export interface ServiceDiscoveryWaitOptions {
  /** Reject with a TimeoutError (registering a DYNAMIC instance: PersistentNodeTimeoutError) after this long; a registration leaves nothing behind. */
  timeoutMs?: number;
  /** Abort the wait: it rejects with `signal.reason`. */
  signal?: AbortSignal;
}

interface Registration {
  instance: ServiceInstance<ServicePayload>;
  /** The node of a DYNAMIC or DYNAMIC_SEQUENTIAL instance, kept through new sessions. */
  node?: PersistentNode;
  /** The node's path once known. */
  path?: string;
}

type Lifecycle = 'LATENT' | 'STARTED' | 'CLOSED';

const isDynamic = (i: ServiceInstance<unknown>) => i.serviceType === 'DYNAMIC' || i.serviceType === 'DYNAMIC_SEQUENTIAL';

/**
 * Service discovery, wire-compatible with Curator 5.4's curator-x-discovery: each instance is a
 * node `<basePath>/<name>/<id>` holding the instance in the JSON of Curator's
 * JsonInstanceSerializer, so Java services using Curator's ServiceDiscovery on the same base path
 * find ours and we find theirs.
 *
 * - **Registering.** A DYNAMIC instance is an EPHEMERAL node (DYNAMIC_SEQUENTIAL: EPHEMERAL_SEQUENTIAL,
 *   the sequence number after the id), kept by a PersistentNode; STATIC and PERMANENT instances are
 *   persistent nodes, replacing one already there, as Curator does. Missing parents are created as
 *   containers. `registerService` resolves once the node exists; on timeout or abort nothing is left
 *   behind.
 * - **SUSPENDED.** Nothing is done: our ephemeral nodes live as long as the session.
 * - **LOST.** Our DYNAMIC nodes go with the session; in the client's next session each is created
 *   again under the same path with its latest data (once the old session's node is gone), as
 *   Curator re-registers on RECONNECTED. Persistent instances are untouched.
 * - `unregisterService` and `close()` delete our nodes, whatever their type (as Curator's do). They
 *   resolve once the server confirms the deletes, or within about a second with them left to the
 *   background (guaranteed deletes, retried while disconnected).
 * - Queries read the server each time (no cache): `queryForNames`, `queryForInstances`,
 *   `queryForInstance`. For a list kept up to date, `serviceCache(name)`; to pick an instance to
 *   call, `serviceProvider(name)`. `close()` closes those too.
 *
 * @example
 * ```ts
 * await using discovery = new ServiceDiscovery(client, '/services');
 * await discovery.start();
 * await discovery.registerService(createServiceInstance({ name: 'api', port: 8080, payload: { region: 'eu' } }));
 * const [peer] = await discovery.queryForInstances('billing');
 * ```
 */
export class ServiceDiscovery implements AsyncDisposable {
  readonly client: ZkClient;
  readonly basePath: string;
  readonly serializer: JsonInstanceSerializer;
  private readonly thisInstance: ServiceInstance<ServicePayload> | undefined;
  private readonly registrations = new Map<string, Registration>();
  private readonly closeables = new Set<ServiceCache | ServiceProvider>();
  private lifecycle: Lifecycle = 'LATENT';
  private closed: Promise<void> | undefined;

  /** @throws InvalidArgumentError for a bad client, path or option (before any I/O). */
  constructor(client: ZkClient, basePath: string, options: ServiceDiscoveryOptions = {}) {
    this.client = validateClient(client, 'ServiceDiscovery');
    this.basePath = validateRecipePath(this.client, basePath, 'service discovery base');
    const o = validateOptions(options, 'options');
    if (o.serializer !== undefined && !(o.serializer instanceof JsonInstanceSerializer)) {
      throw new InvalidArgumentError('serializer must be a JsonInstanceSerializer');
    }
    this.serializer = o.serializer ?? new JsonInstanceSerializer();
    if (o.thisInstance !== undefined) this.serializer.serialize(o.thisInstance);
    this.thisInstance = o.thisInstance;
  }

  /** Starts; registers `thisInstance` if given, resolving once it is registered. Starts once. */
  async start(options?: ServiceDiscoveryWaitOptions): Promise<void> {
    if (this.lifecycle !== 'LATENT') throw new IllegalStateError(`a ServiceDiscovery starts once (it is ${this.lifecycle})`, { path: this.basePath });
    if (!this.client.isStarted) throw new IllegalStateError('the client is not started: call client.start() first', { path: this.basePath });
    this.lifecycle = 'STARTED';
    if (this.thisInstance) await this.registerService(this.thisInstance, options);
  }

  /** The path of an instance's node: `<basePath>/<name>/<id>` (a DYNAMIC_SEQUENTIAL one's node has a number after it). */
  pathForInstance(name: string, id: string): string {
    return joinPath(this.basePath, validateNodeName(name, 'name'), validateNodeName(id, 'id'));
  }

  /**
   * Registers an instance: resolves once its node exists. Registering an id registered here
   * already updates it (see `updateService`).
   *
   * @throws InvalidArgumentError for an instance Curator's JSON cannot carry (before any I/O).
   */
  async registerService(instance: ServiceInstance<ServicePayload>, options?: ServiceDiscoveryWaitOptions): Promise<void> {
    const data = this.serializer.serialize(instance);
    const path = this.pathForInstance(instance.name, instance.id);
    const o = this.checkWait(options);
    this.checkStarted();
    if (this.registrations.has(instance.id)) {
      await this.updateService(instance, options);
      return;
    }
    const registration: Registration = { instance };
    this.registrations.set(instance.id, registration);
    try {
      if (isDynamic(instance)) {
        const node = new PersistentNode(this.client, path, { mode: instance.serviceType === 'DYNAMIC' ? 'EPHEMERAL' : 'EPHEMERAL_SEQUENTIAL', data, createParents: true });
        registration.node = node;
        node.start();
        await node.waitForInitialCreate(o);
        registration.path = node.actualPath;
      } else {
        registration.path = await this.createPersistent(path, data, o);
      }
      log('%s: registered %s/%s at %s', this.basePath, instance.name, instance.id, registration.path);
    } catch (err) {
      // Nothing left behind: the node (created, or in flight) is deleted.
      if (this.registrations.get(instance.id) === registration) this.registrations.delete(instance.id);
      await this.remove(registration);
      throw err;
    }
  }

  /**
   * Writes a registered instance's new fields (the same id, name and type) into its node; a DYNAMIC
   * one is re-created with them after a new session. Resolves once the node holds them.
   *
   * @throws IllegalStateError when the id is not registered here, or its name or type changed.
   */
  async updateService(instance: ServiceInstance<ServicePayload>, options?: ServiceDiscoveryWaitOptions): Promise<void> {
    const data = this.serializer.serialize(instance);
    const o = this.checkWait(options);
    this.checkStarted();
    const registration = this.registrations.get(instance.id);
    if (!registration) throw new IllegalStateError(`service ${instance.name}/${instance.id} is not registered here`, { path: this.basePath });
    if (registration.instance.name !== instance.name || registration.instance.serviceType !== instance.serviceType) {
      throw new IllegalStateError(`service ${instance.id}: an update keeps the name and the service type; unregister and register again`, { path: this.basePath });
    }
    registration.instance = instance;
    if (registration.node) {
      await registration.node.setData(data, o);
    } else {
      const path = registration.path ?? this.pathForInstance(instance.name, instance.id);
      await this.timed(o, `updating ${path}`, (signal) => this.client.setData(path, data, { signal }));
    }
  }

  /** Unregisters an instance of ours by id (or the instance): its node is deleted. Unknown ids are ignored, as in Curator. */
  async unregisterService(instance: ServiceInstance<unknown> | string): Promise<void> {
    const id = typeof instance === 'string' ? instance : instance?.id;
    validateNodeName(id, 'id');
    const registration = this.registrations.get(id);
    if (!registration) return;
    this.registrations.delete(id);
    await this.remove(registration);
    log('%s: unregistered %s/%s', this.basePath, registration.instance.name, id);
  }

  /** The names of the services registered under the base path; [] when there is none. */
  async queryForNames(options?: ServiceDiscoveryWaitOptions): Promise<string[]> {
    const o = this.checkWait(options);
    return await this.timed(o, 'listing the services', (signal) => this.children(this.basePath, signal));
  }

  /**
   * The instances of a service, as their nodes hold them now; [] when it has none. A node that
   * goes while being read is left out.
   *
   * @throws ServiceInstanceFormatError for a node that does not hold an instance's JSON.
   */
  async queryForInstances(name: string, options?: ServiceDiscoveryWaitOptions): Promise<ServiceInstance<ServicePayload>[]> {
    const servicePath = joinPath(this.basePath, validateNodeName(name, 'name'));
    const o = this.checkWait(options);
    return await this.timed(o, `reading the instances of ${servicePath}`, async (signal) => {
      const ids = await this.children(servicePath, signal);
      const found = await Promise.all(ids.map((id) => this.read(joinPath(servicePath, id), signal)));
      return found.filter((i): i is ServiceInstance<ServicePayload> => i !== null);
    });
  }

  /**
   * One instance, by the name of its node under the service (its id; a DYNAMIC_SEQUENTIAL one's
   * with its number); null when there is no such node.
   *
   * @throws ServiceInstanceFormatError for a node that does not hold an instance's JSON.
   */
  async queryForInstance(name: string, id: string, options?: ServiceDiscoveryWaitOptions): Promise<ServiceInstance<ServicePayload> | null> {
    const path = this.pathForInstance(name, id);
    const o = this.checkWait(options);
    return await this.timed(o, `reading ${path}`, (signal) => this.read(path, signal));
  }

  /**
   * A ServiceCache of a service's instances, not started; `close()` of this discovery closes it.
   *
   * @throws InvalidArgumentError for a bad name; IllegalStateError when the discovery is closed.
   */
  serviceCache(name: string): ServiceCache {
    this.checkOpen();
    const cache = new ServiceCache(this, name);
    this.keepUntilClosed(cache, cache);
    return cache;
  }

  /**
   * A ServiceProvider of a service, not started; `close()` of this discovery closes it.
   *
   * @throws InvalidArgumentError for a bad name or option; IllegalStateError when the discovery is closed.
   */
  serviceProvider(name: string, options?: ServiceProviderOptions): ServiceProvider {
    this.checkOpen();
    const provider = new ServiceProvider(this, name, options);
    this.keepUntilClosed(provider, provider.cache);
    return provider;
  }

  /** Unregisters every instance registered here, closes the caches and providers made here, and stops. Idempotent. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.lifecycle = 'CLOSED';
      const all = [...this.registrations.values()];
      this.registrations.clear();
      const closeables = [...this.closeables];
      this.closeables.clear();
      await Promise.all([...all.map((r) => this.remove(r)), ...closeables.map((c) => c.close())]);
    })();
    return this.closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private checkStarted(): void {
    if (this.lifecycle !== 'STARTED') throw new IllegalStateError(`the ServiceDiscovery is ${this.lifecycle === 'LATENT' ? 'not started' : 'closed'}`, { path: this.basePath });
  }

  /** Holds a cache or provider for `close()` until it closes (a provider closes with its cache). */
  private keepUntilClosed(closeable: ServiceCache | ServiceProvider, cache: ServiceCache): void {
    this.closeables.add(closeable);
    cache.once('closed', () => this.closeables.delete(closeable));
  }

  private checkOpen(): void {
    if (this.lifecycle === 'CLOSED') throw new IllegalStateError('the ServiceDiscovery is closed', { path: this.basePath });
  }

  private checkWait(options: ServiceDiscoveryWaitOptions | undefined): PersistentNodeWaitOptions {
    const o = validateOptions(options, 'options');
    const timeoutMs = validateTimeout(o.timeoutMs, 'timeoutMs');
    const signal = validateSignal(o.signal);
    if (signal?.aborted) throw abortReason(signal);
    return { timeoutMs, signal };
  }

  /** Creates a STATIC or PERMANENT instance's node; one already there is replaced, as Curator replaces it. */
  private async createPersistent(path: string, data: Buffer, o: PersistentNodeWaitOptions): Promise<string> {
    return await this.timed(o, `registering ${path}`, async (signal) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.client.create(path, { data, mode: 'PERSISTENT', createParents: 'container', signal });
        } catch (err) {
          if (!isZkError(err, 'NODEEXISTS') || attempt >= 2) throw err;
          await this.client.delete(path, { quietly: true, signal });
        }
      }
    });
  }

  /** Runs `work` with a signal that aborts with the caller's reason, or with a TimeoutError once `timeoutMs` has passed. */
  private async timed<T>(o: PersistentNodeWaitOptions, what: string, work: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
    if (o.timeoutMs === undefined) return await work(o.signal);
    const scope = new DeadlineScope(Deadline.after(o.timeoutMs), o.signal, new TimeoutError(`${what} did not finish within ${o.timeoutMs} ms`, { path: this.basePath }));
    try {
      return await work(scope.signal);
    } finally {
      scope.dispose();
    }
  }

  private async remove(registration: Registration): Promise<void> {
    if (registration.node) {
      await registration.node.close();
      return;
    }
    const path = registration.path;
    if (path === undefined) return;
    const deleting = this.client.delete(path, { guaranteed: true, quietly: true }).catch((err: unknown) => {
      log('%s: deleting %s failed, left to the background: %s', this.basePath, path, String(err));
    });
    // As PersistentNode's close: connected, wait for the delete a bounded while; disconnected,
    // the guaranteed delete goes on in the background and the caller is not held up.
    if (this.client.isConnected) await waitFor(deleting, { deadline: Deadline.after(DELETE_WAIT_MS) });
  }

  private async children(path: string, signal: AbortSignal | undefined): Promise<string[]> {
    try {
      return await this.client.getChildren(path, { signal });
    } catch (err) {
      if (isZkError(err, 'NONODE')) return [];
      throw err;
    }
  }

  private async read(path: string, signal: AbortSignal | undefined): Promise<ServiceInstance<ServicePayload> | null> {
    try {
      const { data } = await this.client.getData(path, { signal });
      return this.serializer.deserialize(data, path);
    } catch (err) {
      if (isZkError(err, 'NONODE')) return null;
      throw err;
    }
  }
}
