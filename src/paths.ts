/**
 * ZooKeeper path rules and helpers: validation with the server's own rules, joining, splitting,
 * and mapping paths in and out of a client namespace.
 */
import { InvalidArgumentError } from './errors';
import { describeValue } from './validate';

/** Options of {@link validatePath}. */
export interface ValidatePathOptions {
  /**
   * The path is the prefix of a sequential node, to which ZooKeeper appends a counter, so a
   * trailing '/' is allowed ('/queue/' creates '/queue/0000000001'). Default false.
   */
  sequential?: boolean;
  /** How the path is named in error messages; default 'path'. */
  what?: string;
}

// Characters ZooKeeper refuses in a path (NUL is reported separately): C0 controls, DEL and C1
// controls, surrogates and the private use area, and the specials block.
// eslint-disable-next-line no-control-regex
const INVALID_CHAR = /[\u0001-\u001F\u007F-\u009F\uD800-\uF8FF\uFFF0-\uFFFF]/;

// A path that passes these rules, as one expression: every path the client sends is checked, so
// valid ones take this fast way; the loop below finds the problem of the others.
// eslint-disable-next-line no-control-regex
const VALID_PATH = /^(?:\/(?!\.\.?(?:\/|$))[^/\u0000-\u001F\u007F-\u009F\uD800-\uF8FF\uFFF0-\uFFFF]+)+$/;

/** Why `path` (already known to be a string) is not a valid ZooKeeper path, or undefined if it is. */
function pathProblem(path: string, sequential: boolean): string | undefined {
  if (path === '') return 'must not be empty';
  if (!path.startsWith('/')) return "must start with '/'";
  // A sequential node's name gets the server's counter appended, so it is checked as created.
  const created = sequential ? `${path}1` : path;
  if (created === '/' || VALID_PATH.test(created)) return undefined;
  if (created.endsWith('/')) return "must not end with '/'";
  for (const segment of created.slice(1).split('/')) {
    if (segment === '') return "must not contain an empty segment ('//')";
    if (segment === '.' || segment === '..') return `must not contain a relative segment ('${segment}')`;
    if (segment.includes('\u0000')) return 'must not contain the null character (U+0000)';
    const bad = INVALID_CHAR.exec(segment);
    if (bad !== null) {
      const code = bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
      return `must not contain the character U+${code}`;
    }
  }
  return undefined;
}

/**
 * Checks `path` against ZooKeeper's rules and returns it unchanged. A valid path is a string that
 * starts with '/', is '/' or does not end with '/' (unless `sequential`), has no empty segment, no
 * '.' or '..' segment, no NUL, and no character in U+0001–U+001F, U+007F–U+009F, U+D800–U+F8FF or
 * U+FFF0–U+FFFF.
 *
 * @throws InvalidArgumentError naming the problem, with `path` set when the path is a string.
 */
export function validatePath(path: unknown, options: ValidatePathOptions = {}): string {
  const what = options.what ?? 'path';
  if (typeof path !== 'string') {
    throw new InvalidArgumentError(`${what} must be a string, got ${describeValue(path)}`);
  }
  const problem = pathProblem(path, options.sequential === true);
  if (problem !== undefined) {
    throw new InvalidArgumentError(`${what} ${JSON.stringify(path)} ${problem}`, { path });
  }
  return path;
}

/** Removes every leading and trailing '/' of a path piece. */
function trimSlashes(piece: string): string {
  let start = 0;
  let end = piece.length;
  while (start < end && piece[start] === '/') start++;
  while (end > start && piece[end - 1] === '/') end--;
  return piece.slice(start, end);
}

/**
 * Joins path pieces with single slashes: a missing leading '/' is added, slashes at the ends of
 * each piece are collapsed, and empty or '/' pieces are skipped, so `joinPath('/', 'a')`,
 * `joinPath('/a/', '/b')` and `joinPath('a', 'b/')` give '/a', '/a/b' and '/a/b';
 * `joinPath('/')` gives '/'. The result is a valid path.
 *
 * @throws InvalidArgumentError when a piece is not a string or the result is not a valid path.
 */
export function joinPath(parent: string, ...children: string[]): string {
  const pieces = [parent, ...children].map((piece, i) => {
    if (typeof piece !== 'string') {
      const name = i === 0 ? 'parent' : `child ${i}`;
      throw new InvalidArgumentError(`joinPath: ${name} must be a string, got ${describeValue(piece)}`);
    }
    return trimSlashes(piece);
  });
  return validatePath('/' + pieces.filter((piece) => piece !== '').join('/'));
}

/**
 * The parent of a valid path: '/a/b' gives '/a', '/a' gives '/'.
 *
 * @throws InvalidArgumentError for '/', which has no parent, or an invalid path.
 */
export function parentOf(path: string): string {
  validatePath(path);
  if (path === '/') throw new InvalidArgumentError("the root path '/' has no parent", { path });
  const slash = path.lastIndexOf('/');
  return slash === 0 ? '/' : path.slice(0, slash);
}

/**
 * The last segment of a valid path: '/a/b' gives 'b'; '/' gives ''.
 *
 * @throws InvalidArgumentError for an invalid path.
 */
export function nodeName(path: string): string {
  validatePath(path);
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * The segments of a valid path, root first: '/a/b' gives ['a', 'b']; '/' gives [].
 *
 * @throws InvalidArgumentError for an invalid path.
 */
export function splitPath(path: string): string[] {
  validatePath(path);
  return path === '/' ? [] : path.slice(1).split('/');
}

/**
 * Checks a client namespace: segments without a leading slash, such as 'app' or 'app/sub', valid
 * when '/' + namespace is a valid path. `undefined` and '' mean "no namespace" and give undefined;
 * otherwise the namespace is returned unchanged.
 *
 * @throws InvalidArgumentError for a non-string or a namespace that makes an invalid path
 *   ('/app' and 'app/' are both refused).
 */
export function validateNamespace(ns: unknown): string | undefined {
  if (ns === undefined || ns === '') return undefined;
  if (typeof ns !== 'string') {
    throw new InvalidArgumentError(`namespace must be a string, got ${describeValue(ns)}`);
  }
  const problem = pathProblem('/' + ns, false);
  if (problem !== undefined) {
    throw new InvalidArgumentError(
      `namespace ${JSON.stringify(ns)} is invalid: the path ${JSON.stringify('/' + ns)} ${problem}`,
    );
  }
  return ns;
}

/**
 * Maps a path relative to `namespace` to the server's absolute path: '/x' under 'app' gives
 * '/app/x', '/' gives '/app'. With no namespace (undefined or '') the path is returned unchanged.
 * Pure string work: `namespace` must have passed {@link validateNamespace} and `path` must start
 * with '/'.
 */
export function withNamespace(namespace: string | undefined, path: string): string {
  if (namespace === undefined || namespace === '') return path;
  return path === '/' ? `/${namespace}` : `/${namespace}${path}`;
}

/**
 * The inverse of {@link withNamespace}: '/app/x' under 'app' gives '/x', '/app' gives '/'. A path
 * outside the namespace (including '/app2' under 'app'), or any path when there is no namespace,
 * is returned unchanged.
 */
export function withoutNamespace(namespace: string | undefined, fullPath: string): string {
  if (namespace === undefined || namespace === '') return fullPath;
  const root = `/${namespace}`;
  if (fullPath === root) return '/';
  return fullPath.startsWith(root + '/') ? fullPath.slice(root.length) : fullPath;
}
