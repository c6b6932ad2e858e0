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
export { UriSpec, type UriSpecPart, type UriVariables } from './UriSpec';
export { JsonInstanceSerializer, JSON_INSTANCE_SERIALIZER_DEFAULTS, type JsonInstanceSerializerOptions } from './JsonInstanceSerializer';
export { ServiceInstanceFormatError } from './errors';
