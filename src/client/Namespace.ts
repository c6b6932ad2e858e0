import { withNamespace, withoutNamespace } from '../paths';
import type { Transport } from '../transport/Transport';
import type { AclForPath } from './acls';
import { mkdirs } from './nodeOps';
import type { RetryLoop } from './RetryLoop';

/**
 * The client's namespace (Curator's namespace): every path a user gives is relative to it, and
 * its node is created on first use.
 */
export class Namespace {
  private ready: Promise<void> | undefined;

  constructor(
    readonly name: string | undefined,
    private readonly retry: RetryLoop,
    private readonly aclFor: AclForPath,
  ) {}

  /** The path on the server for a user's path. */
  full(path: string): string {
    return withNamespace(this.name, path);
  }

  /** The user's path for a path on the server. */
  relative(fullPath: string): string {
    return withoutNamespace(this.name, fullPath);
  }

  /** Makes sure the namespace node exists, once per client (again after a failure), with the ACL provider's ACL, its parents too. */
  async ensure(signal: AbortSignal | undefined): Promise<void> {
    const ns = this.name;
    if (ns === undefined) return;
    if (!this.ready) {
      const ready = this.retry.run({ operation: 'ensurePath', path: `/${ns}`, signal }, (t: Transport) => mkdirs(t, `/${ns}`, 'PERSISTENT', this.aclFor));
      this.ready = ready;
      ready.catch(() => {
        if (this.ready === ready) this.ready = undefined;
      });
    }
    await this.ready;
  }
}
