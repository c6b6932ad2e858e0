/**
 * How the demo writes to the terminal: numbered scenes, one line per event with the time since
 * the demo started and who did it, a progress line, and colours on a terminal (not with NO_COLOR).
 */

const COLOURS = [36, 33, 35, 32, 34, 91, 96];

/** Something to write to: the process's stdout, or a collector in tests. */
export interface Output {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export class Printer {
  private readonly colour: boolean;
  private readonly colours = new Map<string, number>();
  private progressShown = false;

  constructor(
    private readonly out: Output,
    private readonly startedAt: number,
  ) {
    this.colour = out.isTTY === true && !process.env.NO_COLOR;
  }

  /** Whether progress can be redrawn in place. */
  get live(): boolean {
    return this.out.isTTY === true;
  }

  bold(text: string): string {
    return this.colour ? `\x1b[1m${text}\x1b[22m` : text;
  }

  dim(text: string): string {
    return this.colour ? `\x1b[2m${text}\x1b[22m` : text;
  }

  /** A worker's name, in its own colour. */
  who(name: string): string {
    if (!this.colour) return name;
    if (!this.colours.has(name)) this.colours.set(name, COLOURS[this.colours.size % COLOURS.length]);
    return `\x1b[${this.colours.get(name)}m${name}\x1b[39m`;
  }

  /** Any line, as it is. */
  line(text = ''): void {
    this.endProgress();
    this.out.write(`${text}\n`);
  }

  /** A scene's title and what it shows. */
  heading(title: string, explanation: readonly string[]): void {
    this.line();
    this.line(this.bold(title));
    for (const l of explanation) this.line(`  ${this.dim(l)}`);
    this.line();
  }

  /** `  +1.23s  who      what`: something that happened at `at`. */
  event(at: number, who: string, what: string): void {
    const time = `+${((at - this.startedAt) / 1_000).toFixed(2)}s`.padStart(8);
    this.line(`  ${this.dim(time)}  ${this.who(who)}${' '.repeat(Math.max(1, 8 - who.length))}${what}`);
  }

  /** A progress line: redrawn in place on a terminal; elsewhere written only when `milestone` says so. */
  progress(text: string, milestone: boolean): void {
    if (this.live) {
      this.out.write(`\r\x1b[K  ${text}`);
      this.progressShown = true;
    } else if (milestone) {
      this.out.write(`  ${text}\n`);
    }
  }

  /** Ends a progress line that was redrawn in place. */
  endProgress(): void {
    if (!this.progressShown) return;
    this.progressShown = false;
    this.out.write('\n');
  }
}
