import { parseArgs } from 'node:util';

/** How the demo runs. */
export interface DemoArgs {
  /** Short timings and few items, for CI. */
  readonly quick: boolean;
  /** Use this ensemble instead of starting an embedded ZooKeeper. */
  readonly connect: string | undefined;
  readonly help: boolean;
}

export const USAGE = `npm run demo [-- --quick] [-- --connect HOST:PORT]

Shows zk-recipes at work with several worker processes: fair FIFO locking, a read-write lock,
leader election with the leader killed, and a queue with producers and consumers.

  --quick              short timings and few items (CI)
  --connect HOST:PORT  use this ZooKeeper ensemble instead of starting an embedded one
                       (the demo works under /zk-recipes-demo and deletes what it made)
  -h, --help           this help
`;

/** Reads the demo's command line; throws a one-line Error on a bad one. */
export function parseDemoArgs(argv: readonly string[]): DemoArgs {
  let values: { quick?: boolean; connect?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { quick: { type: 'boolean' }, connect: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new Error(err instanceof Error ? err.message.split('\n')[0] : String(err));
  }
  return { quick: values.quick === true, connect: values.connect, help: values.help === true };
}
