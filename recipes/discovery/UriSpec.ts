import { InvalidArgumentError, validateString } from '../../src/recipeKit';

/** One part of a UriSpec: literal text, or the name of a variable (`variable: true`). Curator's `UriSpec.Part`. */
export interface UriSpecPart {
  readonly value: string;
  readonly variable: boolean;
}

/**
 * What `UriSpec.build` reads of an instance; every ServiceInstance is one. Its own type, so that a
 * UriSpec needs nothing of the instance module that holds it.
 */
export interface UriSource {
  readonly name: string;
  readonly id: string;
  readonly address: string | null;
  readonly port: number | null;
  readonly sslPort: number | null;
  /** Milliseconds since the epoch. */
  readonly registrationTimeUTC: number;
  readonly serviceType: string;
}

/** Values of custom variables for `buildUri`; they win over the instance's own. */
export type UriVariables = Readonly<Record<string, string | number | boolean | null | undefined>>;

/**
 * A URI template in Curator's UriSpec syntax, `{scheme}://{address}:{port}/path`, kept as Curator
 * keeps it: a list of parts, literal or variable, which is what the instance JSON carries
 * (`uriSpec.parts`).
 *
 * Variables an instance fills: `{scheme}` ('https' when it has an sslPort, else 'http'),
 * `{name}`, `{id}`, `{address}`, `{port}`, `{ssl-port}`, `{registration-time-utc}`,
 * `{service-type}` (lower case), and `{[}` and `{]}` for literal braces. Others come from the
 * custom variables; one without a value builds as ''.
 */
export class UriSpec {
  readonly parts: readonly UriSpecPart[];

  /**
   * Parses a template as Curator does: `{` inside a variable, `}` without its `{` and a variable
   * left open are errors; `{}` is dropped.
   *
   * @throws InvalidArgumentError for a template Curator would refuse.
   */
  constructor(template: string) {
    validateString(template, 'uriSpec', { allowEmpty: true });
    const parts: UriSpecPart[] = [];
    let text = '';
    let inVariable = false;
    const flush = (variable: boolean) => {
      if (text !== '') parts.push(Object.freeze({ value: text, variable }));
      text = '';
    };
    for (const ch of template) {
      if (ch === '{') {
        if (inVariable) throw new InvalidArgumentError(`uriSpec ${JSON.stringify(template)}: '{' inside a variable`);
        flush(false);
        inVariable = true;
      } else if (ch === '}') {
        if (!inVariable) throw new InvalidArgumentError(`uriSpec ${JSON.stringify(template)}: '}' without its '{'`);
        flush(true);
        inVariable = false;
      } else {
        text += ch;
      }
    }
    if (inVariable) throw new InvalidArgumentError(`uriSpec ${JSON.stringify(template)}: the last variable is not closed`);
    flush(false);
    this.parts = Object.freeze(parts);
  }

  /** A UriSpec from parts as they arrive in an instance's JSON. */
  static fromParts(parts: readonly UriSpecPart[]): UriSpec {
    const spec = new UriSpec('');
    (spec as { parts: readonly UriSpecPart[] }).parts = Object.freeze(parts.map((p) => Object.freeze({ value: p.value, variable: p.variable })));
    return spec;
  }

  /** The template again, `{name}` for each variable. */
  toString(): string {
    return this.parts.map((p) => (p.variable ? `{${p.value}}` : p.value)).join('');
  }

  /** Builds the URI from an instance (or none) and custom variables, as Curator's `UriSpec.build`. */
  build(instance?: UriSource | null, variables: UriVariables = {}): string {
    const values = new Map<string, unknown>();
    if (instance) {
      values.set('scheme', instance.sslPort !== null ? 'https' : 'http');
      values.set('name', instance.name);
      values.set('id', instance.id);
      values.set('address', instance.address);
      values.set('port', instance.port);
      values.set('ssl-port', instance.sslPort);
      values.set('registration-time-utc', instance.registrationTimeUTC);
      values.set('service-type', instance.serviceType.toLowerCase());
    } else {
      values.set('scheme', 'http');
    }
    values.set('[', '{');
    values.set(']', '}');
    for (const [key, value] of Object.entries(variables)) values.set(key, value);
    return this.parts
      .map((p) => {
        if (!p.variable) return p.value;
        const value = values.get(p.value);
        return value === null || value === undefined ? '' : String(value);
      })
      .join('');
  }
}
