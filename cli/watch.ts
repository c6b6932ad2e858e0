import { setMaxListeners } from 'node:events';
import debug from 'debug';
import type { ZkClient } from '../src/client/ZkClient';
import { ConnectionState } from '../src/client/ConnectionState';
import { StepLoop } from '../src/util/StepLoop';
import type { Invocation } from './args';
import type { Command, Report } from './command';
import { openClient } from './connect';
import { CliError, ExitCode } from './errors';
import type { CliIo } from './io';
import { WatchedReader } from './WatchedReader';

const log = debug('zk-recipes:cli:watch');

/** How often a terminal view is redrawn to age what it shows; it reads nothing from ZooKeeper. */
const REDRAW_MS = 1_000;
// Clear the screen and home the cursor.
const CLEAR = '\x1b[H\x1b[2J';

/** The report without its times, to tell a change from a repeat. */
function stateOf(report: Report): string {
  return JSON.stringify(report, (key, value: unknown) => (key === 'at' || key === 'ageMs' ? undefined : value));
}

/**
 * `zk-recipes watch <command> <path>`: shows the view, then again each time it changes, until
 * `io.stop` aborts.
 *
 * - **No polling.** The view reads through a WatchedReader: a ChildrenWatch on every node it
 *   lists and a NodeWatch on every node it reads (each also watches for a missing node's
 *   creation). A change one of them sees reads the view again; nodes already watched are answered
 *   from their watches. Changes that come while a reading runs make one more reading (StepLoop).
 * - **Output.** On a terminal the screen is redrawn, and once a second the ages move on without
 *   reading. Elsewhere each change prints the view after a `--- <time>` line; with --json each
 *   change prints the report as one line. A read that finds the same state prints nothing.
 * - **Errors.** A path without the recipe at the start ends the watch as the one-shot command
 *   would. A missing path, at the start or later, is shown, and the watch waits for it to be
 *   created; a path that stops holding the recipe is shown until it holds it again.
 *   A lost connection is shown; the view is read again on reconnection.
 */
export async function watchView(command: Command, invocation: Extract<Invocation, { kind: 'view' }>, io: CliIo): Promise<void> {
  const stop = io.stop ?? new AbortController().signal;
  const client = await openClient(invocation.connect, invocation.timeoutMs, stop);
  try {
    await new LiveView(command, invocation, io, client, stop).run();
  } finally {
    await client.close();
  }
}

class LiveView {
  private readonly tty: boolean;
  private readonly loop: StepLoop;
  private readonly reader: WatchedReader;
  private last: { text: string; report: Report | undefined; state: string } | undefined;
  private started = false;
  private firstError: unknown;
  /** A line about the connection, shown under the view until the next reading. */
  private notice: string | undefined;

  constructor(
    private readonly command: Command,
    private readonly invocation: Extract<Invocation, { kind: 'view' }>,
    private readonly io: CliIo,
    private readonly client: ZkClient,
    private readonly stop: AbortSignal,
  ) {
    this.tty = io.stdout.isTTY === true && !invocation.json;
    this.loop = new StepLoop(() => this.readOnce(), {
      firstRetryMs: 500,
      maxRetryMs: Math.max(500, invocation.timeoutMs),
      onError: (err) => this.show(undefined, `error ${String(err)}`, `cannot read the view: ${err instanceof Error ? err.message : String(err)}`),
    });
    this.reader = new WatchedReader(client, () => this.loop.kick(), stop);
  }

  async run(): Promise<void> {
    const onState = (state: ConnectionState) => this.onState(state);
    this.client.on('stateChanged', onState);
    const redraw = this.tty ? setInterval(() => this.draw(), REDRAW_MS) : undefined;
    try {
      this.loop.kick();
      await this.loop.idle;
      // The first reading decides whether there is anything to watch.
      if (this.firstError !== undefined) throw this.firstError;
      this.started = true;
      await new Promise<void>((resolve) => {
        if (this.stop.aborted) return resolve();
        this.stop.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      this.loop.stop();
      this.client.off('stateChanged', onState);
      clearInterval(redraw);
      if (this.tty) this.io.stdout.write('\n');
    }
  }

  /**
   * One reading of the view. A missing path or another recipe is shown, and the watches left on
   * the path report when that changes; any other failure goes to the loop, which reads again
   * after a back-off (or at once on a change or a reconnection).
   */
  private async readOnce(): Promise<void> {
    const signal = AbortSignal.any([this.stop, AbortSignal.timeout(this.invocation.timeoutMs)]);
    setMaxListeners(0, signal);
    try {
      const report = await this.reader.reading(signal, (reader) => this.command.read(reader, this.invocation.path, this.invocation.name));
      this.show(report, stateOf(report));
    } catch (err) {
      if (this.stop.aborted) return;
      // A path that does not exist yet is followed until it is created: the reading's watches on
      // it stay, and report its creation. An unused lock's container is reaped, so this is common.
      if (!this.started && !(err instanceof CliError && err.exitCode === ExitCode.NO_NODE)) {
        this.firstError = err;
        return;
      }
      log('reading %s failed: %O', this.invocation.path, err);
      if (!(err instanceof CliError)) throw err;
      this.show(undefined, `error ${err.message}`, err.message);
    }
  }

  private onState(state: ConnectionState): void {
    if (state === ConnectionState.SUSPENDED || state === ConnectionState.LOST) {
      this.note(`connection ${state === ConnectionState.LOST ? 'lost (session expired)' : 'lost'}: showing the last view read`);
    } else if (this.started) {
      this.loop.kick();
    }
  }

  private show(report: Report | undefined, state: string, message?: string): void {
    const hadNotice = this.notice !== undefined;
    this.notice = undefined;
    if (this.last?.state === state) {
      if (hadNotice && this.tty) this.draw();
      return;
    }
    const text = report ? this.command.render(report, Date.now()) : (message ?? '');
    this.last = { text, report, state };
    if (this.invocation.json) {
      this.io.stdout.write(`${JSON.stringify(report ?? { command: this.command.name, path: this.invocation.path, at: new Date().toISOString(), error: message })}\n`);
    } else if (this.tty) {
      this.draw();
    } else {
      this.io.stdout.write(`--- ${new Date().toISOString()}\n${text}\n`);
    }
  }

  /** Tells of a connection problem: in a terminal the line stays under the view until the next reading. */
  private note(text: string): void {
    this.notice = text;
    if (this.invocation.json) this.io.stdout.write(`${JSON.stringify({ command: this.command.name, path: this.invocation.path, at: new Date().toISOString(), note: text })}\n`);
    else if (this.tty) this.draw();
    else this.io.stdout.write(`--- ${new Date().toISOString()}\n${text}\n`);
  }

  private draw(): void {
    const note = this.notice;
    const last = this.last;
    if (!last) return;
    const text = last.report ? this.command.render(last.report, Date.now()) : last.text;
    const header = `zk-recipes watch ${this.command.name} ${this.invocation.path}  (${this.invocation.connect}; Ctrl-C to stop)`;
    this.io.stdout.write(`${CLEAR}${header}\n\n${text}\n${note ? `\n${note}\n` : ''}`);
  }
}
