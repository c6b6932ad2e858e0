/**
 * `npm run bench [-- <suite>] [--quick] [--connect host:port]`
 *
 * Starts an embedded ZooKeeper through the testing harness (JIT fully on, fsync off), or uses the
 * server given with --connect, and runs the named suites. Suites: client.
 * Absolute times depend on the machine; the ratios are what the results claim.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { TestingServer } from '../src/testing';
import { clientTable, runClientBench } from './client';

interface Args {
  suites: string[];
  quick: boolean;
  connect: string | undefined;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { suites: [], quick: false, connect: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') args.quick = true;
    else if (a === '--connect') args.connect = argv[++i];
    else if (a.startsWith('--connect=')) args.connect = a.slice('--connect='.length);
    else if (!a.startsWith('-')) args.suites.push(a);
    else throw new Error(`unknown flag ${a}`);
  }
  if (args.suites.length === 0) args.suites = ['client'];
  return args;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const server = args.connect ? undefined : await TestingServer.start({ forceSync: false, fastStartup: false, logLevel: 'error' });
  const connectString = args.connect ?? (server as TestingServer).connectString;
  const version = server ? ((await server.fourLetterWord('srvr')).split('\n')[0] ?? '') : 'external';
  const sections: string[] = [
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}. ${version}.`,
    args.quick ? '(quick smoke run: figures are not meaningful)' : '',
  ];
  try {
    for (const suite of args.suites) {
      if (suite === 'client') {
        console.log('client: framework overhead per operation against the native binding …');
        const rows = await runClientBench({ connectString, quick: args.quick });
        sections.push('## Client framework overhead', '', clientTable(rows));
      } else {
        throw new Error(`unknown suite ${suite}`);
      }
    }
  } finally {
    await server?.close();
  }
  const text = sections.filter((s) => s !== undefined).join('\n\n');
  console.log(`\n${text}\n`);
  if (!args.quick) {
    const dir = join(__dirname, 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${args.suites.join('-')}.md`), `${text}\n`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
