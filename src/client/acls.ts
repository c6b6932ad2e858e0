/** Which ACL a node the client creates gets: the `aclProvider`'s, resolved as Curator's ACLProvider is. */
import { InvalidArgumentError } from '../errors';
import { OPEN_ACL, type ACL } from '../transport/Transport';
import type { AclProvider } from './options';
import { validateAcl } from './validation';

/** The ACL for a node the client is about to create, by its path (namespace included, chroot not). */
export type AclForPath = (path: string) => readonly ACL[];

/** The lookup without a provider: one for every client. */
const openAcl: AclForPath = () => OPEN_ACL;

/**
 * The ACL lookup for a client: the provider's `getAclForPath(path)`, or its `getDefaultAcl()` when
 * that gives null or undefined; the open ACL without a provider. What the provider gives is checked
 * before the create is sent, so a bad ACL is an InvalidArgumentError and never a server's INVALIDACL.
 */
export function aclsFrom(provider: AclProvider | undefined): AclForPath {
  if (provider === undefined) return openAcl;
  return (path) => {
    const acl = provider.getAclForPath(path) ?? provider.getDefaultAcl();
    try {
      validateAcl(acl);
    } catch (err) {
      throw new InvalidArgumentError(`the aclProvider's ACL for ${path} is not usable: ${(err as Error).message}`, { path, cause: err });
    }
    return acl;
  };
}
