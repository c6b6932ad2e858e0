/** The checks every recipe's constructor makes of its client and path, before any I/O. */
import { InvalidArgumentError } from '../errors';
import { validatePath, withNamespace } from '../paths';
import { describeValue } from '../validate';
import { ZkClient } from './ZkClient';

/** ZooKeeper's own subtree: quotas and configuration live there, and recipes must not. */
const RESERVED = '/zookeeper';

/** Checks that `client` is a ZkClient. */
export function validateClient(client: unknown, what: string): ZkClient {
  if (!(client instanceof ZkClient)) throw new InvalidArgumentError(`${what} needs a ZkClient, got ${describeValue(client)}`);
  return client;
}

/**
 * Checks a recipe's path: a valid path, not the root, and not in ZooKeeper's reserved subtree (as
 * the client's namespace places it on the server).
 */
export function validateRecipePath(client: ZkClient, path: unknown, what: string): string {
  const valid = validatePath(path, { what: `the ${what} path` });
  if (valid === '/') throw new InvalidArgumentError(`a ${what} path cannot be the root`, { path: valid });
  const onServer = withNamespace(client.namespace, valid);
  if (onServer === RESERVED || onServer.startsWith(`${RESERVED}/`)) {
    throw new InvalidArgumentError(`a ${what} path cannot be in ZooKeeper's reserved ${RESERVED} subtree: ${onServer}`, { path: valid });
  }
  return valid;
}
