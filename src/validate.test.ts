import { InvalidArgumentError } from './errors';
import {
  describeValue,
  MAX_DATA_BYTES,
  toData,
  validateBoolean,
  validateFunction,
  validateOptions,
  validatePositiveInt,
  validateSignal,
  validateString,
  validateTimeout,
} from './validate';

function expectInvalid(fn: () => unknown, message: string): void {
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
  expect(error.message).toBe(message);
}

describe('describeValue', () => {
  it.each([
    [NaN, 'NaN'],
    [-1, '-1'],
    [-0, '-0'],
    [Infinity, 'Infinity'],
    [1.5, '1.5'],
    ['abc', '"abc"'],
    ['x'.repeat(61), `"${'x'.repeat(60)}…"`],
    [10n, '10n'],
    [true, 'true'],
    [undefined, 'undefined'],
    [null, 'null'],
    [Symbol('s'), 'a symbol'],
    [() => 1, 'a function'],
    [[1], 'an array'],
    [{ a: 1 }, 'an object'],
    [new Date(0), 'an object'],
  ])('describes %p as %s', (value, expected) => {
    expect(describeValue(value)).toBe(expected);
  });
});

describe('MAX_DATA_BYTES', () => {
  it('is 1 MiB - 1 (jute.maxbuffer) less 1 KiB', () => {
    expect(MAX_DATA_BYTES).toBe(0xfffff - 1023);
    expect(MAX_DATA_BYTES).toBe(1_047_552);
  });
});

describe('toData', () => {
  it('gives an empty Buffer for undefined and null', () => {
    for (const value of [undefined, null]) {
      const data = toData(value);
      expect(Buffer.isBuffer(data)).toBe(true);
      expect(data.length).toBe(0);
    }
  });

  it('returns a Buffer as is', () => {
    const buffer = Buffer.from([1, 2, 3]);
    expect(toData(buffer)).toBe(buffer);
  });

  it('wraps a Uint8Array without copying, honouring its offset and length', () => {
    const backing = new Uint8Array([9, 1, 2, 3, 9]);
    const view = backing.subarray(1, 4);
    const data = toData(view);
    expect(Buffer.isBuffer(data)).toBe(true);
    expect([...data]).toEqual([1, 2, 3]);
    backing[2] = 7;
    expect([...data]).toEqual([1, 7, 3]);
  });

  it('encodes a string as UTF-8', () => {
    expect(toData('héllo')).toEqual(Buffer.from([0x68, 0xc3, 0xa9, 0x6c, 0x6c, 0x6f]));
    expect(toData('').length).toBe(0);
  });

  it('accepts exactly MAX_DATA_BYTES bytes', () => {
    expect(toData(Buffer.alloc(MAX_DATA_BYTES)).length).toBe(MAX_DATA_BYTES);
    expect(toData('a'.repeat(MAX_DATA_BYTES)).length).toBe(MAX_DATA_BYTES);
  });

  it('rejects one byte more, saying the size and the limit', () => {
    const message = `data is ${MAX_DATA_BYTES + 1} bytes, more than the limit of ${MAX_DATA_BYTES} bytes`;
    expectInvalid(() => toData(Buffer.alloc(MAX_DATA_BYTES + 1)), message);
    expectInvalid(() => toData(new Uint8Array(MAX_DATA_BYTES + 1)), message);
    expectInvalid(() => toData('a'.repeat(MAX_DATA_BYTES + 1)), message);
  });

  it('counts UTF-8 bytes, not characters, for strings', () => {
    // 'é' is two bytes in UTF-8.
    const text = 'é'.repeat(MAX_DATA_BYTES / 2) + 'a';
    expectInvalid(
      () => toData(text, 'payload'),
      `payload is ${MAX_DATA_BYTES + 1} bytes, more than the limit of ${MAX_DATA_BYTES} bytes`,
    );
  });

  it.each([
    [42, '42'],
    [true, 'true'],
    [{}, 'an object'],
    [[1, 2], 'an array'],
    [new ArrayBuffer(2), 'an object'],
  ])('rejects %p', (value, got) => {
    expectInvalid(() => toData(value), `data must be a Buffer, a Uint8Array, a string, null or undefined, got ${got}`);
  });

  it('names the payload as told', () => {
    expectInvalid(
      () => toData(1, 'lock data'),
      'lock data must be a Buffer, a Uint8Array, a string, null or undefined, got 1',
    );
  });
});

describe('validateTimeout', () => {
  it.each([0, 1, 1.5, 1e9, Infinity])('accepts %p', (value) => {
    expect(validateTimeout(value, 'timeoutMs')).toBe(value);
  });

  it('accepts undefined', () => {
    expect(validateTimeout(undefined, 'timeoutMs')).toBeUndefined();
  });

  it.each([
    [NaN, 'NaN'],
    [-1, '-1'],
    [-Infinity, '-Infinity'],
    ['100', '"100"'],
    [null, 'null'],
    [{}, 'an object'],
  ])('rejects %p', (value, got) => {
    expectInvalid(() => validateTimeout(value, 'timeoutMs'), `timeoutMs must be a non-negative number, got ${got}`);
  });
});

describe('validatePositiveInt', () => {
  it('accepts integers from 1 by default', () => {
    expect(validatePositiveInt(1, 'n')).toBe(1);
    expect(validatePositiveInt(Number.MAX_SAFE_INTEGER, 'n')).toBe(Number.MAX_SAFE_INTEGER);
    expectInvalid(() => validatePositiveInt(0, 'n'), 'n must be a positive integer, got 0');
    expectInvalid(() => validatePositiveInt(Number.MAX_SAFE_INTEGER + 1, 'n'), 'n must be a positive integer, got 9007199254740992');
  });

  it('honours min and max, both inclusive', () => {
    expect(validatePositiveInt(0, 'n', { min: 0 })).toBe(0);
    expect(validatePositiveInt(5, 'n', { min: 2, max: 5 })).toBe(5);
    expect(validatePositiveInt(2, 'n', { min: 2, max: 5 })).toBe(2);
    expectInvalid(() => validatePositiveInt(6, 'n', { min: 2, max: 5 }), 'n must be an integer between 2 and 5, got 6');
    expectInvalid(() => validatePositiveInt(1, 'n', { min: 2, max: 5 }), 'n must be an integer between 2 and 5, got 1');
    expectInvalid(() => validatePositiveInt(2, 'n', { min: 3 }), 'n must be an integer >= 3, got 2');
  });

  it('returns 0 for -0', () => {
    expect(Object.is(validatePositiveInt(-0, 'n', { min: 0 }), 0)).toBe(true);
  });

  it.each([
    [-1, '-1'],
    [NaN, 'NaN'],
    [1.5, '1.5'],
    [Infinity, 'Infinity'],
    ['3', '"3"'],
    [undefined, 'undefined'],
    [null, 'null'],
    [3n, '3n'],
  ])('rejects %p', (value, got) => {
    expectInvalid(() => validatePositiveInt(value, 'count', { min: 0 }), `count must be a non-negative integer, got ${got}`);
  });
});

describe('validateSignal', () => {
  it('accepts undefined and an AbortSignal', () => {
    expect(validateSignal(undefined)).toBeUndefined();
    const signal = new AbortController().signal;
    expect(validateSignal(signal)).toBe(signal);
    const aborted = AbortSignal.abort();
    expect(validateSignal(aborted)).toBe(aborted);
  });

  it.each([
    [null, 'null'],
    [{ aborted: false }, 'an object'],
    [new AbortController(), 'an object'],
    [true, 'true'],
  ])('rejects %p', (value, got) => {
    expectInvalid(() => validateSignal(value), `signal must be an AbortSignal, got ${got}`);
  });
});

describe('validateFunction', () => {
  it('returns the function', () => {
    const fn = (x: number): number => x + 1;
    const checked = validateFunction(fn, 'listener');
    expect(checked).toBe(fn);
    expect(checked(1)).toBe(2);
    expect(validateFunction(class {}, 'ctor')).toBeInstanceOf(Function);
  });

  it.each([
    [undefined, 'undefined'],
    [null, 'null'],
    [{}, 'an object'],
    ['f', '"f"'],
  ])('rejects %p', (value, got) => {
    expectInvalid(() => validateFunction(value, 'listener'), `listener must be a function, got ${got}`);
  });
});

describe('validateString', () => {
  it('accepts non-empty strings, and the empty string only with allowEmpty', () => {
    expect(validateString('a', 'id')).toBe('a');
    expect(validateString('', 'id', { allowEmpty: true })).toBe('');
    expectInvalid(() => validateString('', 'id'), 'id must not be empty');
    expectInvalid(() => validateString('', 'id', { allowEmpty: false }), 'id must not be empty');
  });

  it.each([
    [5, '5'],
    [undefined, 'undefined'],
    [null, 'null'],
    [['a'], 'an array'],
  ])('rejects %p', (value, got) => {
    expectInvalid(() => validateString(value, 'id', { allowEmpty: true }), `id must be a string, got ${got}`);
  });
});

describe('validateBoolean', () => {
  it('accepts true and false', () => {
    expect(validateBoolean(true, 'flag')).toBe(true);
    expect(validateBoolean(false, 'flag')).toBe(false);
  });

  it.each([
    [0, '0'],
    ['yes', '"yes"'],
    [undefined, 'undefined'],
    [null, 'null'],
  ])('rejects %p', (value, got) => {
    expectInvalid(() => validateBoolean(value, 'flag'), `flag must be a boolean, got ${got}`);
  });
});

describe('validateOptions', () => {
  it('gives {} for undefined and returns an object as is', () => {
    expect(validateOptions(undefined, 'options')).toEqual({});
    const options = { a: 1 };
    expect(validateOptions(options, 'options')).toBe(options);
  });

  it.each([
    [null, 'null'],
    [5, '5'],
    ['x', '"x"'],
    [[], 'an array'],
    [() => ({}), 'a function'],
  ])('rejects %p', (value, got) => {
    expectInvalid(() => validateOptions(value as never, 'options'), `options must be an object, got ${got}`);
  });
});
