/**
 * What an ensemble's configuration node (`/zookeeper/config`) says about where clients connect.
 */

/** Addresses that stand for "every interface": a member listening there is reached at its quorum host. */
const WILDCARDS = new Set(['0.0.0.0', '::', '0:0:0:0:0:0:0:0']);

/**
 * The members' client addresses ("host:port,…", in server id order), as Curator's EnsembleTracker
 * reads them from the configuration's `server.N=quorumHost:port:port[:role][;[clientHost:]clientPort]`
 * lines: a member that listens on every interface is named by its quorum host, and a member with no
 * client address is left out. Undefined when no member has one: a standalone server (whose
 * configuration is empty), or an ensemble configured without reconfiguration (whose server lines
 * carry none).
 */
export function ensembleHosts(config: string): string | undefined {
  const members: Array<{ id: number; address: string }> = [];
  for (const line of config.split('\n')) {
    const match = /^server\.(\d+)=([^;]*);(.+)$/.exec(line.trim());
    if (match === null) continue;
    const client = splitHostPort(match[3].trim());
    if (client === undefined) continue;
    const host = client.host === undefined || WILDCARDS.has(client.host) ? quorumHost(match[2].trim()) : client.host;
    if (host === undefined || host === '') continue;
    members.push({ id: Number(match[1]), address: `${host.includes(':') ? `[${host}]` : host}:${client.port}` });
  }
  if (members.length === 0) return undefined;
  return members
    .sort((a, b) => a.id - b.id)
    .map((m) => m.address)
    .join(',');
}

/** "host:port", "[v6]:port" or a bare "port"; undefined when the port is not one. */
function splitHostPort(text: string): { host: string | undefined; port: number } | undefined {
  let host: string | undefined;
  let portText = text;
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(text);
  if (bracketed !== null) [, host, portText] = bracketed;
  else if (text.includes(':')) {
    const colon = text.lastIndexOf(':');
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
  }
  const port = Number(portText);
  return /^\d{1,5}$/.test(portText) && port > 0 && port <= 65_535 ? { host, port } : undefined;
}

/** The host of a quorum address "host:port:port[:role]" or "[v6]:port:port[:role]". */
function quorumHost(peer: string): string | undefined {
  if (peer.startsWith('[')) {
    const end = peer.indexOf(']');
    return end < 0 ? undefined : peer.slice(1, end);
  }
  return peer.split(':')[0];
}
