import { describeFirstBytes } from './peer';

describe('describeFirstBytes', () => {
  it('shows a text reply by its first line, marking what follows', () => {
    expect(describeFirstBytes(Buffer.from('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'))).toBe('"HTTP/1.1 400 Bad Request…"');
    expect(describeFirstBytes(Buffer.from('-ERR unknown command'))).toBe('"-ERR unknown command"');
  });

  it('shows bytes that are not text in hex, the first 16 of them', () => {
    expect(describeFirstBytes(Buffer.from([0, 0, 0, 3, 1, 2, 3]))).toBe('<00 00 00 03 01 02 03>');
    expect(describeFirstBytes(Buffer.alloc(20, 0xff))).toBe(`<${Array(16).fill('ff').join(' ')} …>`);
  });
});
