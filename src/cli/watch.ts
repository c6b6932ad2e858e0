import { setMaxListeners } from 'node:events';
import debug from 'debug';
import type { ZkClient } from '../client/ZkClient';
import { ConnectionState } from '../client/ConnectionState';
import type { Invocation } from './args';
import type { Command, Report } from './command';
import { openClient } from './connect';
import { CliError } from './errors';
import { NodeReader } from './NodeReader';
import type { CliIo } from './run';
import { WatchSet } from './WatchSet';

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
 * - **No polling.** Every read sets a one-shot watch (children of listed nodes, data of read
 *   nodes, existence of a missing path), at most one per node and kind; a watch that fires reads
 *   the view again, which sets the next watches. Events that come while a read runs make one
 *   more read, not one each.
 * - **Output.** On a terminal the screen is redrawn, and once a second the ages move on without
 *   reading. Elsewhere each change prints the view after a `--- <time>` line; with --json each
 *   change prints the report as one line. A read that finds the same state prints nothing.
 * - **Errors.** A missing path, or one without the recipe, at the start ends the watch as the
 *   one-shot command would. Later they are shown, and the watch waits for the path to come back.
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
  private readonly watches = new WatchSet(() => this.kick());
  private readonly tty: boolean;
  private dirty = true;
  private reading: Promise<void> | undefined;
  private last: { text: string; report: Report | undefined; state: string } | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
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
  }

  async run(): Promise<void> {
    const offState = this.client.on('stateChanged', (state) => this.onState(state));
    const redraw = this.tty ? setInterval(() => this.draw(), REDRAW_MS) : undefined;
    try {
      this.kick();
      await this.reading;
      // The first reading decides whether there is anything to watch.
      if (this.firstError !== undefined) throw this.firstError;
      this.started = true;
      await new Promise<void>((resolve) => {
        if (this.stop.aborted) return resolve();
        this.stop.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      offState();
      clearInterval(redraw);
      clearTimeout(this.retryTimer);
      if (this.tty) this.io.stdout.write('\n');
    }
  }

  /** Reads the view again, now or right after the read under way. */
  private kick(): void {
    this.dirty = true;
    this.reading ??= this.readWhileDirty().finally(() => (this.reading = undefined));
  }

  private async readWhileDirty(): Promise<void> {
    while (this.dirty && !this.stop.aborted) {
      this.dirty = false;
      clearTimeout(this.retryTimer);
      await this.readOnce();
    }
  }

  private async readOnce(): Promise<void> {
    const signal = AbortSignal.any([this.stop, AbortSignal.timeout(this.invocation.timeoutMs)]);
    setMaxListeners(0, signal);
    try {
      const report = await this.command.read(new NodeReader(this.client, signal, this.watches), this.invocation.path);
      this.show(report, stateOf(report));
    } catch (err) {
      if (this.stop.aborted) return;
      if (!this.started) {
        this.firstError = err;
        return;
      }
      const message = err instanceof CliError ? err.message : `cannot read the view: ${err instanceof Error ? err.message : String(err)}`;
      log('reading %s failed: %O', this.invocation.path, err);
      this.show(undefined, `error ${message}`, message);
      // A missing path or another recipe leaves watches that report the change. Any other
      // failure (a timeout, a connection problem) is read again on reconnection, or after a while.
      if (!(err instanceof CliError) && this.client.isConnected) {
        this.retryTimer = setTimeout(() => this.kick(), this.invocation.timeoutMs);
      }
    }
  }

  private onState(state: ConnectionState): void {
    if (state === ConnectionState.SUSPENDED || state === ConnectionState.LOST) {
      this.note(`connection ${state === ConnectionState.LOST ? 'lost (session expired)' : 'lost'}: showing the last view read`);
    } else if (this.started) {
      this.kick();
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
