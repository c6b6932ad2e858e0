/**
 * The README says what a user sees: its sample error texts are the real ones, made here against
 * real peers, and its links reach what they name from the published package too (which holds
 * dist/ and CHANGELOG.md only: anything else is linked at the repository).
 */
import { existsSync, readFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ConnectionTimeoutError, ZkClient } from '../../src';
import { eventually } from '../helpers';

const root = join(__dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { repository: { url: string } };
const repository = manifest.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');

/** The samples marked `<!-- error-sample: name -->` above a text block. */
function samples(): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of readme.matchAll(/<!-- error-sample: ([\w-]+) -->\n```text\n([\s\S]*?)\n```/g)) found.set(match[1], match[2]);
  return found;
}

/** How long a wait took varies from run to run; the rest of the text does not. */
function normalise(text: string): string {
  return text.replace(/within \d+ ms/g, 'within <n> ms');
}

const clients: ZkClient[] = [];
afterAll(() => Promise.all(clients.map((c) => c.close())));

/**
 * `String(error)` of the connection timeout, once the client has made an attempt at `connectString`,
 * on the default transport (the one the samples show). Short waits, repeated: the first may end
 * before the first attempt has failed.
 */
async function connectionTimeout(connectString: string): Promise<string> {
  const client = new ZkClient({ connectString });
  clients.push(client);
  client.start();
  return eventually(`a connection timeout for ${connectString} that says why`, async () => {
    const err = await client.blockUntilConnected({ timeoutMs: 200 }).then(
      () => new Error('connected'),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConnectionTimeoutError);
    return String(err).includes('the last attempt failed') && String(err);
  });
}

/** Makes each sample's real error, as the README's text says it comes about. */
const makers: Record<string, () => Promise<string>> = {
  'host-not-found': () => connectionTimeout('nosuchhost.invalid:2181'),
  'not-zookeeper': async () => {
    const server = http.createServer((_req, res) => res.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      // The sample shows the usual HTTP port.
      return (await connectionTimeout(`127.0.0.1:${port}`)).replaceAll(`127.0.0.1:${port}`, '127.0.0.1:8080');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  },
};

describe('README', () => {
  it('has a maker here for each error sample, and a sample for each maker', () => {
    expect([...samples().keys()].sort()).toEqual(Object.keys(makers).sort());
  });

  it.each(Object.keys(makers))('error sample %s is the real text', async (name) => {
    const sample = samples().get(name);
    expect(sample).toBeDefined();
    expect(normalise(await makers[name]())).toBe(normalise(sample as string));
  });

  it("links only to what the package holds, or to the repository's files", () => {
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
    expect(links.length).toBeGreaterThan(0);
    const wrong: string[] = [];
    for (const link of links) {
      if (link.startsWith('#') || link === 'CHANGELOG.md' || link === 'LICENSE') continue;
      const file = /^(?:blob|tree)\/main\/(.+)$/.exec(link.startsWith(`${repository}/`) ? link.slice(repository.length + 1) : '')?.[1];
      if (link.startsWith('http') && !link.startsWith(repository)) continue;
      if (file === undefined || !existsSync(join(root, file))) wrong.push(link);
    }
    expect(wrong).toEqual([]);
  });
});
