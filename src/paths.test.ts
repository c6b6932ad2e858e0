import fc from 'fast-check';
import { InvalidArgumentError } from './errors';
import {
  joinPath,
  nodeName,
  parentOf,
  splitPath,
  validateNamespace,
  validatePath,
  withNamespace,
  withoutNamespace,
} from './paths';

function catchInvalid(fn: () => unknown): InvalidArgumentError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(InvalidArgumentError);
  const error = caught as InvalidArgumentError;
  expect(error.code).toBe('INVALID_ARGUMENT');
  expect(error.name).toBe('InvalidArgumentError');
  return error;
}

describe('validatePath', () => {
  it.each([
    '/',
    '/a',
    '/a/b/c',
    '/a.b',
    '/...',
    '/.a',
    '/a./b..',
    '/zookeeper',
    '/lock-0000000001',
    '/é/日本/\u00A0',
    '/\uF900',
    '/\uFFEF',
    '/a b',
  ])('accepts %p and returns it', (path) => {
    expect(validatePath(path)).toBe(path);
  });

  it.each([
    ['/a/', "must not end with '/'"],
    ['//', "must not end with '/'"],
    ['/a//b', "must not contain an empty segment ('//')"],
    ['//a', "must not contain an empty segment ('//')"],
    ['/.', "must not contain a relative segment ('.')"],
    ['/..', "must not contain a relative segment ('..')"],
    ['/a/./b', "must not contain a relative segment ('.')"],
    ['/a/../b', "must not contain a relative segment ('..')"],
    ['/a/..', "must not contain a relative segment ('..')"],
    ['a', "must start with '/'"],
    ['a/b', "must start with '/'"],
    [' /a', "must start with '/'"],
    ['/a\u0000b', 'must not contain the null character (U+0000)'],
    ['/a\u0001', 'must not contain the character U+0001'],
    ['/a\u001F', 'must not contain the character U+001F'],
    ['/a\u007F', 'must not contain the character U+007F'],
    ['/a\u009F', 'must not contain the character U+009F'],
    ['/a\n', 'must not contain the character U+000A'],
    ['/\uD800', 'must not contain the character U+D800'],
    ['/\uE000', 'must not contain the character U+E000'],
    ['/\uF8FF', 'must not contain the character U+F8FF'],
    ['/\uFFF0', 'must not contain the character U+FFF0'],
    ['/\uFFFF', 'must not contain the character U+FFFF'],
    ['/😀', 'must not contain the character U+D83D'],
  ])('rejects %p: %s', (path, problem) => {
    const error = catchInvalid(() => validatePath(path));
    expect(error.message).toBe(`path ${JSON.stringify(path)} ${problem}`);
    expect(error.path).toBe(path);
  });

  it('rejects the empty string', () => {
    const error = catchInvalid(() => validatePath(''));
    expect(error.message).toBe('path "" must not be empty');
    expect(error.path).toBe('');
  });

  it.each([
    [undefined, 'undefined'],
    [null, 'null'],
    [5, '5'],
    [{}, 'an object'],
    [['/a'], 'an array'],
  ])('rejects the non-string %p', (path, got) => {
    const error = catchInvalid(() => validatePath(path));
    expect(error.message).toBe(`path must be a string, got ${got}`);
    expect(error.path).toBeUndefined();
  });

  it('reports the first problem in the path', () => {
    expect(catchInvalid(() => validatePath('/a//./b')).message).toContain('empty segment');
    expect(catchInvalid(() => validatePath('/./a//b')).message).toContain("relative segment ('.')");
  });

  it('names the path as told', () => {
    expect(catchInvalid(() => validatePath('x', { what: 'lock path' })).message).toBe(
      'lock path "x" must start with \'/\'',
    );
    expect(catchInvalid(() => validatePath(1, { what: 'lock path' })).message).toBe('lock path must be a string, got 1');
  });

  describe('sequential', () => {
    it.each(['/', '/a/', '/a/b/', '/a/lock-', '/a/.', '/a/..'])('accepts %p, which the counter completes', (path) => {
      expect(validatePath(path, { sequential: true })).toBe(path);
    });

    it.each([
      ['', 'must not be empty'],
      ['a/', "must start with '/'"],
      ['//', "must not contain an empty segment ('//')"],
      ['/a//', "must not contain an empty segment ('//')"],
      ['/a/./', "must not contain a relative segment ('.')"],
      ['/a\u0000/', 'must not contain the null character (U+0000)'],
    ])('still rejects %p', (path, problem) => {
      expect(catchInvalid(() => validatePath(path, { sequential: true })).message).toBe(
        `path ${JSON.stringify(path)} ${problem}`,
      );
    });

    it('is off by default and when false', () => {
      expect(() => validatePath('/a/')).toThrow(InvalidArgumentError);
      expect(() => validatePath('/a/', { sequential: false })).toThrow(InvalidArgumentError);
    });
  });
});

describe('validatePath against the rules as written', () => {
  // The rules of its TSDoc, checked one by one: the fast check must accept exactly these paths.
  const valid = (path: string): boolean => {
    if (!path.startsWith('/')) return false;
    if (path === '/') return true;
    if (path.endsWith('/')) return false;
    return path
      .slice(1)
      .split('/')
      .every((segment) => segment !== '' && segment !== '.' && segment !== '..' && [...segment].every((ch) => !isRefused(ch.charCodeAt(0))));
  };
  const isRefused = (code: number) => code === 0 || (code >= 0x01 && code <= 0x1f) || (code >= 0x7f && code <= 0x9f) || (code >= 0xd800 && code <= 0xf8ff) || code >= 0xfff0;
  const alphabet = ['/', '/', '/', '.', 'a', 'Z', '-', '_', ' ', '\u0000', '\u0001', '\u001f', '\u007f', '\u009f', '\u00a0', '\ud800', '\uf8ff', '\uf900', '\ufff0', '\uffef', 'é'];
  const paths = fc.array(fc.constantFrom(...alphabet), { maxLength: 12 }).map((chars) => chars.join(''));

  it('accepts a path exactly when the rules do', () => {
    fc.assert(
      fc.property(paths, (path) => {
        let accepted = true;
        try {
          validatePath(path);
        } catch (err) {
          expect(err).toBeInstanceOf(InvalidArgumentError);
          accepted = false;
        }
        expect(accepted).toBe(valid(path));
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('joinPath', () => {
  it.each([
    [['/'], '/'],
    [[''], '/'],
    [['/', ''], '/'],
    [['/', '/'], '/'],
    [['/', 'a'], '/a'],
    [['', 'a'], '/a'],
    [['/a', 'b'], '/a/b'],
    [['/a/', 'b'], '/a/b'],
    [['/a', '/b'], '/a/b'],
    [['/a/', '/b/'], '/a/b'],
    [['a', 'b'], '/a/b'],
    [['/a', 'b/c'], '/a/b/c'],
    [['/a', ''], '/a'],
    [['/a', 'b', 'c', 'd'], '/a/b/c/d'],
    [['/a', '', 'c'], '/a/c'],
    [['/a', '/', 'c'], '/a/c'],
    [['//a//', '//b//'], '/a/b'],
  ])('joins %p as %p', (pieces, expected) => {
    const [parent, ...children] = pieces;
    expect(joinPath(parent, ...children)).toBe(expected);
  });

  it('validates the result', () => {
    const error = catchInvalid(() => joinPath('/a', 'b//c'));
    expect(error.message).toBe("path \"/a/b//c\" must not contain an empty segment ('//')");
    expect(error.path).toBe('/a/b//c');
    expect(catchInvalid(() => joinPath('/a', '..')).message).toContain("relative segment ('..')");
    expect(catchInvalid(() => joinPath('/a', 'b\u0001')).message).toContain('U+0001');
  });

  it('rejects non-string pieces', () => {
    expect(catchInvalid(() => joinPath(undefined as never, 'a')).message).toBe(
      'joinPath: parent must be a string, got undefined',
    );
    expect(catchInvalid(() => joinPath('/a', 'b', 3 as never)).message).toBe('joinPath: child 2 must be a string, got 3');
  });
});

describe('parentOf', () => {
  it.each([
    ['/a', '/'],
    ['/a/b', '/a'],
    ['/a/b/c', '/a/b'],
  ])('gives the parent of %p as %p', (path, parent) => {
    expect(parentOf(path)).toBe(parent);
  });

  it('throws for the root', () => {
    const error = catchInvalid(() => parentOf('/'));
    expect(error.message).toBe("the root path '/' has no parent");
    expect(error.path).toBe('/');
  });

  it('throws for an invalid path', () => {
    expect(catchInvalid(() => parentOf('/a/')).message).toBe('path "/a/" must not end with \'/\'');
    expect(catchInvalid(() => parentOf('a')).message).toBe('path "a" must start with \'/\'');
  });
});

describe('nodeName', () => {
  it.each([
    ['/', ''],
    ['/a', 'a'],
    ['/a/b', 'b'],
    ['/a/lock-0000000007', 'lock-0000000007'],
  ])('gives the name of %p as %p', (path, name) => {
    expect(nodeName(path)).toBe(name);
  });

  it('throws for an invalid path', () => {
    catchInvalid(() => nodeName('/a//b'));
  });
});

describe('splitPath', () => {
  it.each([
    ['/', []],
    ['/a', ['a']],
    ['/a/b/c', ['a', 'b', 'c']],
  ])('splits %p into %p', (path, segments) => {
    expect(splitPath(path)).toEqual(segments);
  });

  it('throws for an invalid path', () => {
    catchInvalid(() => splitPath(''));
  });
});

describe('validateNamespace', () => {
  it('treats undefined and the empty string as no namespace', () => {
    expect(validateNamespace(undefined)).toBeUndefined();
    expect(validateNamespace('')).toBeUndefined();
  });

  it.each(['app', 'app/sub', 'a.b', 'my-app_1'])('accepts %p', (ns) => {
    expect(validateNamespace(ns)).toBe(ns);
  });

  it.each([
    ['/app', 'the path "//app" must not contain an empty segment (\'//\')'],
    ['app/', 'the path "/app/" must not end with \'/\''],
    ['app//sub', 'the path "/app//sub" must not contain an empty segment (\'//\')'],
    ['..', 'the path "/.." must not contain a relative segment (\'..\')'],
    ['app/.', 'the path "/app/." must not contain a relative segment (\'.\')'],
    ['a\u0000', 'the path "/a\\u0000" must not contain the null character (U+0000)'],
    ['a\u0007', 'the path "/a\\u0007" must not contain the character U+0007'],
  ])('rejects %p', (ns, problem) => {
    expect(catchInvalid(() => validateNamespace(ns)).message).toBe(
      `namespace ${JSON.stringify(ns)} is invalid: ${problem}`,
    );
  });

  it.each([
    [null, 'null'],
    [5, '5'],
    [{}, 'an object'],
  ])('rejects the non-string %p', (ns, got) => {
    expect(catchInvalid(() => validateNamespace(ns)).message).toBe(`namespace must be a string, got ${got}`);
  });
});

describe('withNamespace / withoutNamespace', () => {
  it.each([
    ['app', '/', '/app'],
    ['app', '/x', '/app/x'],
    ['app', '/x/y', '/app/x/y'],
    ['app/sub', '/x', '/app/sub/x'],
    ['app/sub', '/', '/app/sub'],
  ])('maps %p + %p to %p and back', (ns, path, full) => {
    expect(withNamespace(ns, path)).toBe(full);
    expect(withoutNamespace(ns, full)).toBe(path);
  });

  it('leaves paths unchanged without a namespace', () => {
    for (const ns of [undefined, '']) {
      expect(withNamespace(ns, '/x')).toBe('/x');
      expect(withNamespace(ns, '/')).toBe('/');
      expect(withoutNamespace(ns, '/x')).toBe('/x');
      expect(withoutNamespace(ns, '/')).toBe('/');
    }
  });

  it('returns paths outside the namespace unchanged', () => {
    expect(withoutNamespace('app', '/other/x')).toBe('/other/x');
    expect(withoutNamespace('app', '/app2')).toBe('/app2');
    expect(withoutNamespace('app', '/app2/x')).toBe('/app2/x');
    expect(withoutNamespace('app', '/')).toBe('/');
    expect(withoutNamespace('app/sub', '/app')).toBe('/app');
    expect(withoutNamespace('app/sub', '/app/x')).toBe('/app/x');
  });

  it('keeps a sequential prefix intact', () => {
    expect(withNamespace('app', '/queue/')).toBe('/app/queue/');
    expect(withoutNamespace('app', '/app/queue/0000000001')).toBe('/queue/0000000001');
  });
});
