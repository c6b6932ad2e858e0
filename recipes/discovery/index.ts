/** Service discovery, wire-compatible with Curator's curator-x-discovery. */
export { ServiceDiscovery, type ServiceDiscoveryOptions, type ServiceDiscoveryWaitOptions } from './ServiceDiscovery';
export {
  createServiceInstance,
  localIpAddress,
  SERVICE_TYPES,
  type ServiceInstance,
  type ServiceInstanceOptions,
  type ServicePayload,
  type ServiceType,
  type JsonValue,
} from './ServiceInstance';
export { UriSpec, type UriSpecPart, type UriVariables, type UriSource } from './UriSpec';
export { JsonInstanceSerializer, JSON_INSTANCE_SERIALIZER_DEFAULTS, type JsonInstanceSerializerOptions } from './JsonInstanceSerializer';
export { ServiceInstanceFormatError } from './errors';
export { ServiceCache, type ServiceCacheEvents, type ServiceCacheStartOptions, type ServiceCacheChangesOptions, type ServiceCacheSource } from './ServiceCache';
export { ServiceProvider, type ServiceProviderOptions, type InstanceFilter } from './ServiceProvider';
export type { ProviderStrategy } from './ProviderStrategy';
export { RoundRobinStrategy } from './RoundRobinStrategy';
export { RandomStrategy } from './RandomStrategy';
export { StickyStrategy } from './StickyStrategy';
export { DOWN_INSTANCE_POLICY_DEFAULTS, type DownInstancePolicy } from './DownInstanceManager';
