import { ServiceInstanceFormatError } from '../recipes/discovery/errors';
import { JsonInstanceSerializer } from '../recipes/discovery/JsonInstanceSerializer';
import type { JsonValue, ServiceType } from '../recipes/discovery/ServiceInstance';
import { joinPath } from '../src/paths';
import type { Command, Report } from './command';
import { plural, table } from './format';
import type { Reader } from './NodeReader';

/** A registered service: its name under the base path, and how many instance nodes it has. */
export interface ServiceNameView {
  readonly name: string;
  readonly instances: number;
}

/** One instance of a service, as Curator's JsonInstanceSerializer reads it. */
export interface ServiceInstanceView {
  readonly id: string;
  readonly name: string;
  readonly address: string | null;
  readonly port: number | null;
  readonly sslPort: number | null;
  readonly serviceType: ServiceType;
  readonly enabled: boolean;
  /** When it registered (ISO 8601), from its registrationTimeUTC. */
  readonly registered: string;
  /** The payload's JSON, `@class` included when it has one. */
  readonly payload: JsonValue | null;
  /** Its UriSpec as written, e.g. `{scheme}://{address}:{port}`; null without one. */
  readonly uriSpec: string | null;
  /** Its node is EPHEMERAL (a DYNAMIC instance of a live session). */
  readonly ephemeral: boolean;
}

/** What `zk-recipes services <base-path> [<name>]` reports. */
export interface ServicesReport extends Report {
  readonly command: 'services';
  /** The service whose instances are listed; null when the report lists the services' names. */
  readonly service: string | null;
  /** Without a service: the services registered under the base path, by name. */
  readonly services: readonly ServiceNameView[];
  /** With a service: its instances, by id. */
  readonly instances: readonly ServiceInstanceView[];
  /** With a service: the nodes under it that hold no instance Curator could read. */
  readonly unreadable: readonly string[];
}

// Only reads: the options that shape what it writes do not matter here.
const serializer = new JsonInstanceSerializer();

async function readServices(reader: Reader, path: string, service?: string): Promise<ServicesReport> {
  const at = new Date().toISOString();
  const base = { command: 'services' as const, path, at, service: service ?? null };
  if (service === undefined) {
    const listing = await reader.list(path);
    const names = await reader.nodes(path, [...listing.children].sort());
    return { ...base, services: names.map((n) => ({ name: n.name, instances: n.stat.numChildren })), instances: [], unreadable: [] };
  }
  const servicePath = joinPath(path, service);
  const listing = await reader.list(servicePath);
  const instances: ServiceInstanceView[] = [];
  const unreadable: string[] = [];
  for (const node of await reader.nodes(servicePath, [...listing.children].sort())) {
    try {
      const i = serializer.deserialize(node.data ?? Buffer.alloc(0), node.path);
      instances.push({
        id: i.id,
        name: i.name,
        address: i.address,
        port: i.port,
        sslPort: i.sslPort,
        serviceType: i.serviceType,
        enabled: i.enabled,
        registered: new Date(i.registrationTimeUTC).toISOString(),
        payload: i.payload,
        uriSpec: i.uriSpec === null ? null : i.uriSpec.toString(),
        ephemeral: node.stat.ephemeralOwner !== 0n,
      });
    } catch (err) {
      if (!(err instanceof ServiceInstanceFormatError)) throw err;
      // A node Curator's cache would skip too: listed as such, not a failure of the command.
      unreadable.push(node.name);
    }
  }
  return { ...base, services: [], instances, unreadable };
}

function render(report: ServicesReport): string {
  if (report.service === null) {
    const lines = [`${report.path}  ${plural(report.services.length, 'service')}`];
    if (report.services.length > 0) lines.push(...table([['NAME', 'INSTANCES'], ...report.services.map((s) => [s.name, String(s.instances)])]).map((l) => `  ${l}`));
    return lines.join('\n');
  }
  const lines = [`${joinPath(report.path, report.service)}  ${plural(report.instances.length, 'instance')}`];
  if (report.instances.length > 0) {
    const rows = report.instances.map((i) => [
      i.id,
      i.address ?? '-',
      i.port === null ? '-' : String(i.port),
      i.sslPort === null ? '-' : String(i.sslPort),
      i.enabled ? i.serviceType : `${i.serviceType} (disabled)`,
      i.payload === null ? '-' : JSON.stringify(i.payload),
    ]);
    lines.push(...table([['ID', 'ADDRESS', 'PORT', 'SSL PORT', 'TYPE', 'PAYLOAD'], ...rows]).map((l) => `  ${l}`));
  }
  if (report.unreadable.length > 0) lines.push(`  ${plural(report.unreadable.length, 'node')} holding no instance ignored: ${report.unreadable.join(', ')}`);
  return lines.join('\n');
}

/** `zk-recipes services <base-path> [<name>]`. */
export const servicesCommand: Command<ServicesReport> = {
  name: 'services',
  summary: "the services registered under a base path, or one service's instances (curator-x-discovery)",
  read: readServices,
  render,
};
