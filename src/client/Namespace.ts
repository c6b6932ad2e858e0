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
  /** Whether the namespace node is known to exist (or there is no namespace): nothing to wait for. */
  private done: boolean;

  constructor(
    readonly name: string | undefined,
    private readonly retry: RetryLoop,
    private readonly aclFor: AclForPath,
  ) {
    this.done = name === undefined;
  }

  /** The path on the server for a user's path. */
  full(path: string): string {
    return withNamespace(this.name, path);
  }

  /** The user's path for a path on the server. */
  relative(fullPath: string): string {
    return withoutNamespace(this.name, fullPath);
  }

  /**
   * Makes sure the namespace node exists, once per client (again after a failure), with the ACL
   * provider's ACL, its parents too. Undefined when that is known already, so that an operation
   * waits for nothing (not even a turn of the microtask queue) once it is.
   */
  ensure(signal: AbortSignal | undefined): Promise<void> | undefined {
    if (this.done) return undefined;
    const ns = this.name as string;
    if (!this.ready) {
      const ready = this.retry.run({ operation: 'ensurePath', path: `/${ns}`, signal }, (t: Transport) => mkdirs(t, `/${ns}`, 'PERSISTENT', this.aclFor));
      this.ready = ready;
      ready.then(
        () => {
          if (this.ready === ready) this.done = true;
        },
        () => {
          if (this.ready === ready) this.ready = undefined;
        },
      );
    }
    return this.ready;
  }
}
