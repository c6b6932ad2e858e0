/**
 * The connect string ("host:port,host:port[/chroot]"): the servers to try, in what order, and the
 * chroot that every path is relative to.
 */
import { InvalidArgumentError } from '../errors';

/** ZooKeeper's client port, used when an entry gives none (as the Java client does). */
export const DEFAULT_PORT = 2181;

export interface HostAddress {
  readonly host: string;
  readonly port: number;
}

export interface ParsedConnectString {
  readonly hosts: readonly HostAddress[];
  /** The chroot ('/app'), or undefined when paths are the server's own. */
  readonly chroot: string | undefined;
}

/**
 * Parses a connect string as the Java client's ConnectStringParser does: the chroot is everything
 * from the first '/', '/' alone meaning none; an entry without a port gets 2181; IPv6 addresses are
 * written in brackets ("[::1]:2181").
 *
 * @throws InvalidArgumentError for an empty string, an empty entry, a bad port or a bad chroot.
 */
export function parseConnectString(connectString: string): ParsedConnectString {
  if (typeof connectString !== 'string' || connectString.trim() === '') {
    throw new InvalidArgumentError('connectString must be a non-empty "host:port[,host:port…][/chroot]"');
  }
  const slash = connectString.indexOf('/');
  const hostsPart = slash < 0 ? connectString : connectString.slice(0, slash);
  let chroot = slash < 0 ? undefined : connectString.slice(slash);
  if (chroot === '/') chroot = undefined;
  if (chroot !== undefined && (chroot.endsWith('/') || chroot.includes('//') || /[\0\s]/.test(chroot))) {
    throw new InvalidArgumentError(`connectString has an invalid chroot "${chroot}"`);
  }
  const hosts = hostsPart.split(',').map((raw): HostAddress => {
    const entry = raw.trim();
    if (entry === '') throw new InvalidArgumentError(`connectString "${connectString}" has an empty server entry`);
    let host = entry;
    let portText: string | undefined;
    const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(entry);
    if (bracketed) {
      host = bracketed[1];
      portText = bracketed[2];
    } else {
      const colon = entry.lastIndexOf(':');
      if (colon >= 0) {
        host = entry.slice(0, colon);
        portText = entry.slice(colon + 1);
      }
    }
    if (host === '') throw new InvalidArgumentError(`server "${entry}" in connectString has no host`);
    if (portText === undefined || portText === '') return { host, port: DEFAULT_PORT };
    const port = Number(portText);
    if (!/^\d{1,5}$/.test(portText) || port < 1 || port > 65535) {
      throw new InvalidArgumentError(`server "${entry}" in connectString has an invalid port`);
    }
    return { host, port };
  });
  return { hosts, chroot };
}

/** "host:port", brackets around IPv6 addresses. */
export function formatHost({ host, port }: HostAddress): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * The servers in the order to try them, as the Java client's StaticHostProvider keeps them: shuffled
 * once, then tried in turn, moving on after each failure. Once every server has been tried since
 * the last connection dropped, `next` says so, and the caller waits before trying again.
 *
 * Unlike StaticHostProvider, the server of a connection that dropped counts as untried: each
 * server, that one included, gets one attempt before the wait. With one server, the Java client
 * waits its whole spin delay before the first attempt to get back into the session; the client
 * declares the session lost a margin before the server can expire it, and that wait could take
 * most of the time left between a read timeout and that moment.
 */
export class HostList {
  /** Replaced, not refilled: an array sized for its servers (one, most often), with no room to grow. */
  private hosts: readonly HostAddress[];
  private current = -1;
  /** Where the current round of attempts started; -1 before the first attempt and after a connection. */
  private roundStart = -1;

  constructor(
    hosts: readonly HostAddress[],
    private readonly random: () => number = Math.random,
  ) {
    this.hosts = this.shuffled(hosts);
  }

  /** A new list (an ensemble that was reconfigured): shuffled, and tried from its start. */
  replace(hosts: readonly HostAddress[]): void {
    this.hosts = this.shuffled(hosts);
    this.current = -1;
    this.roundStart = -1;
  }

  private shuffled(hosts: readonly HostAddress[]): HostAddress[] {
    if (hosts.length === 0) throw new InvalidArgumentError('a host list needs at least one server');
    const shuffled = [...hosts];
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
    }
    return shuffled;
  }

  /** Whether a server of the list has this port and one of these names or addresses. */
  has(port: number, names: ReadonlyArray<string | undefined>): boolean {
    return this.hosts.some((h) => h.port === port && names.includes(h.host));
  }

  get size(): number {
    return this.hosts.length;
  }

  /** The servers in their shuffled order. */
  get order(): readonly HostAddress[] {
    return this.hosts;
  }

  /** The server to try next, and whether every server has been tried since the last connection dropped. */
  next(): { host: HostAddress; cycled: boolean } {
    this.current = (this.current + 1) % this.hosts.length;
    const cycled = this.current === this.roundStart;
    // The first attempt of a round starts it: no wait before the list has been tried once.
    if (this.roundStart === -1) this.roundStart = this.current;
    return { host: this.hosts[this.current], cycled };
  }

  /** A connection was made to the current server: once it drops, a new round starts with the server after it. */
  onConnected(): void {
    this.roundStart = -1;
  }
}

/**
 * The chroot, both ways: client paths get it in front on the way out; server paths lose it on the
 * way back (created paths, watch events, ephemerals), as the Java client's Chroot does.
 */
export class Chroot {
  constructor(readonly root: string | undefined) {}

  /** The server's path for a client path. */
  prepend(clientPath: string): string {
    const root = this.root;
    if (root === undefined) return clientPath;
    return clientPath === '/' ? root : root + clientPath;
  }

  /** The client's path for a server path; a path outside the chroot is returned as it is. */
  strip(serverPath: string): string {
    const root = this.root;
    if (root === undefined || !serverPath.startsWith(root)) return serverPath;
    if (serverPath.length === root.length) return '/';
    return serverPath[root.length] === '/' ? serverPath.slice(root.length) : serverPath;
  }
}
