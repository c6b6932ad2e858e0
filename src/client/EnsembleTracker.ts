import debug from 'debug';
import type { Transport, WatchEvent } from '../transport/Transport';
import { ensembleHosts } from './ensembleConfig';

const log = debug('zk-recipes:client:ensemble');

/**
 * Follows the ensemble's membership, as Curator's EnsembleTracker does: at every connection, and
 * again whenever it changes, it reads the ensemble's configuration with a watch, and moves the
 * client to the members it lists (see `ensembleHosts`). A configuration that names no member (a
 * standalone server, or an ensemble without dynamic reconfiguration) changes nothing.
 */
export class EnsembleTracker {
  /** Only the latest read acts, and only its watch reads again: one watch however many reconnects. */
  private generation = 0;
  private closed = false;

  /** `client`: what moves the client to the members found (Connection.updateServers). */
  constructor(private readonly client: { updateServers(hosts: string): void }) {}

  /** Reads the configuration on `t`, which has just connected, and watches it there. */
  follow(t: Transport): void {
    if (this.closed || t.getConfig === undefined) return;
    const generation = ++this.generation;
    const changed = (event: WatchEvent) => {
      if (event.type === 'changed' && generation === this.generation && !t.isClosed) this.follow(t);
    };
    t.getConfig(changed).then(
      ({ data }) => {
        if (this.closed || generation !== this.generation) return;
        const hosts = ensembleHosts(data.toString('utf8'));
        if (hosts !== undefined) this.client.updateServers(hosts);
      },
      // The next connection reads it again.
      (err: unknown) => log('reading the ensemble configuration failed: %s', (err as Error)?.message ?? err),
    );
  }

  close(): void {
    this.closed = true;
  }
}
