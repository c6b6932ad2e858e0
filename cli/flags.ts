import { parseArgs, type ParseArgsConfig } from 'node:util';
import { usageError } from './errors';

type Strict<O> = { options: O; allowPositionals: true; strict: true };

/**
 * Reads a command line with `parseArgs`, strict and with positionals, as every command does.
 *
 * @throws CliError (USAGE) with parseArgs' own one-sentence reason: its errors carry a code, never
 * a path.
 */
export function parseFlags<O extends NonNullable<ParseArgsConfig['options']>>(argv: readonly string[], options: O): ReturnType<typeof parseArgs<Strict<O>>> {
  try {
    return parseArgs<Strict<O> & { args: string[] }>({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw usageError(err instanceof Error ? err.message.split('\n')[0] : String(err));
  }
}
