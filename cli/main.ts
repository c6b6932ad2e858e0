#!/usr/bin/env node
/**
 * The `zk-recipes` executable (package.json `bin`): `npx zk-recipes locks /locks/orders`. See
 * `runCli` for what it does and `zk-recipes --help` for how to use it.
 */
import { runCli } from './run';

const stop = new AbortController();
// Ctrl-C ends a watch cleanly, and cuts a one-shot command short with exit code 130.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort(new Error(signal)));
// `zk-recipes tree / | head` closes our stdout early: that is the reader's choice, not a failure.
process.stdout.on('error', (err: NodeJS.ErrnoException) => process.exit(err.code === 'EPIPE' ? 0 : 1));

runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stop: stop.signal }).then((code) => {
  process.exitCode = code;
  // Everything is closed by now; should a native handle still hold the loop open, do not hang.
  setTimeout(() => process.exit(code), 1_000).unref();
});
