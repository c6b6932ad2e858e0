import { dataText, escapeInvisible, showData, table } from './format';

describe('escapeInvisible', () => {
  it('writes format characters and line and paragraph separators as \\u escapes', () => {
    const hostile = ['\u202e', '\u2028', '\u2029', '\u200b', '\u200e', '\u200f', '\u2066', '\u2067', '\u2068', '\u2069', '\ufeff', '\u00ad', '\u061c'];
    for (const c of hostile) expect(escapeInvisible(`a${c}b`)).toBe(`a\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}b`);
    // A format character past the BMP (a language tag) is escaped one UTF-16 unit at a time, as JSON writes it.
    expect(escapeInvisible('x\u{e0001}y')).toBe('x\\udb40\\udc01y');
    expect(JSON.parse(`"${escapeInvisible('name\u202egnp.exe\u{e0001}')}"`)).toBe('name\u202egnp.exe\u{e0001}');
  });

  it('leaves printable text, tabs, new lines and the terminal controls of the CLI itself alone', () => {
    const text = 'lock-0000000001\tnaïve ☃ 名前 👍\n\x1b[H';
    expect(escapeInvisible(text)).toBe(text);
  });

  it('escapes table cells before aligning them, and data text shown in a cell', () => {
    const data = dataText(showData(Buffer.from('evil\u2028line', 'utf8')));
    const rows = table([
      ['NODE', 'DATA'],
      ['a\u202eb', data],
      ['abcdefghij', '-'],
    ]);
    expect(rows).toEqual(['NODE        DATA', 'a\\u202eb    "evil\\u2028line"', 'abcdefghij  -']);
    for (const row of rows) expect(row).not.toMatch(/[\u202e\u2028]/);
  });
});
