import { connect } from 'node:net';

/**
 * Sends a four-letter word ('srvr', 'mntr', 'stat', 'cons', 'wchs', …) to a server and resolves to
 * its answer. Rejects when the server cannot be reached or does not answer within `timeoutMs`.
 */
export function fourLetterWord(host: string, port: number, word: string, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${word} to ${host}:${port} got no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('connect', () => socket.end(word));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** Parses `mntr` output into numbers where they are numbers. */
export function parseMntr(text: string): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const line of text.split('\n')) {
    const [key, value] = line.split('\t');
    if (!key || value === undefined) continue;
    const n = Number(value);
    out[key.trim()] = Number.isFinite(n) && value.trim() !== '' ? n : value.trim();
  }
  return out;
}

/** The `Mode:` line of `srvr`: 'standalone', 'leader', 'follower', 'observer', or undefined when not serving. */
export function parseMode(srvr: string): string | undefined {
  const m = /^Mode: (\S+)/m.exec(srvr);
  return m?.[1];
}
