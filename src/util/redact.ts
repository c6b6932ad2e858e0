/**
 * Keeping secrets out of `util.inspect` (and so out of `console.log`): the TLS key, its passphrase
 * and the digest passwords of `authInfo` sit in the options the client, its connection and its
 * transports hold, and a log line of any of them at any depth must not show them.
 */
import { inspect, type InspectOptions } from 'node:util';

/** What a secret shows as. */
export const REDACTED = '[redacted]';

// The TLS connect options that hold private key material or what unlocks it; a TLS session
// ticket resumes the session, so it is one too.
const TLS_SECRETS = ['key', 'passphrase', 'pfx', 'session'] as const;

type Inspect = (value: unknown, options: InspectOptions) => string;

/**
 * Makes `target` show as `view()` to `util.inspect`, through a non-enumerable property: a spread
 * or `Object.keys` of it does not see the property. Returns `target`.
 */
export function inspectAs<T extends object>(target: T, view: () => unknown): T {
  Object.defineProperty(target, inspect.custom, {
    value: (_depth: number, options: InspectOptions, show: Inspect = inspect) => show(view(), options),
  });
  return target;
}

/** A frozen copy of TLS options whose secrets show as REDACTED to `util.inspect`. */
export function secretTls<T extends object>(tls: T): Readonly<T> {
  const copy = { ...tls };
  const shown: Record<string, unknown> = { ...(tls as Record<string, unknown>) };
  for (const name of TLS_SECRETS) if (shown[name] !== undefined) shown[name] = REDACTED;
  return Object.freeze(inspectAs(copy, () => shown));
}

/** A frozen copy of credentials that shows its scheme, not its secret, to `util.inspect`. */
export function secretAuth<T extends { readonly scheme: string; readonly auth: string }>({ scheme, auth }: T): Readonly<{ scheme: string; auth: string }> {
  return Object.freeze(inspectAs({ scheme, auth }, () => ({ scheme, auth: REDACTED })));
}

/** What an object holding secrets shows as: its class name and `fields`, formatted as `util.inspect` would. */
export function showAs(name: string, fields: Record<string, unknown>, options: InspectOptions, show: Inspect = inspect): string {
  return `${name} ${show(fields, options)}`;
}
