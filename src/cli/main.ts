#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { registerCommands } from './commands/index.js';
import { UsageError } from './errors.js';

/** Entry point of the `azflex` CLI. Bad input: one precise message on stderr and exit 2. */
export async function main(argv: string[]): Promise<number> {
  const program = new Command('azflex')
    .description('Leak-free cross-region Azure GPU nodes for Karpenter-style NodePools')
    .exitOverride()
    // One line, whatever commander adds (its "Did you mean …?" goes on a line of its own).
    .configureOutput({ outputError: (str, write) => write(`${oneLine(str)}\n`) })
    .showSuggestionAfterError(true);
  registerCommands(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return Number(process.exitCode ?? 0);
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    if (err instanceof UsageError) {
      process.stderr.write(`azflex: ${oneLine(err.message)}\n`);
      return 2;
    }
    // A bug, not the user's input: still one line (AZFLEX_DEBUG=1 prints the stack).
    const stack = process.env.AZFLEX_DEBUG && err instanceof Error ? err.stack : undefined;
    process.stderr.write(`azflex: internal error: ${stack ?? `${oneLine(err instanceof Error ? err.message : String(err))} (AZFLEX_DEBUG=1 shows the stack)`}\n`);
    return 1;
  }
}

/** Most characters of that line: a message may quote the input, and the input may be a megabyte long. */
const MAX_MESSAGE_CHARS = 2000;

/** Bad input gets exactly one line, even when a parser's message spans several, and a bounded one. */
function oneLine(message: string): string {
  const line = message.trim().replace(/\s*\n\s*/g, ' ');
  return line.length > MAX_MESSAGE_CHARS ? `${line.slice(0, MAX_MESSAGE_CHARS)}… (${line.length - MAX_MESSAGE_CHARS} more characters)` : line;
}

/**
 * Exits once stdout and stderr have taken everything written: to a pipe they are asynchronous,
 * and process.exit() would cut a large --json at the pipe's 64 KiB buffer.
 */
export async function exitAfterFlush(code: number): Promise<never> {
  await Promise.all([process.stdout, process.stderr].map((stream) => new Promise<void>((resolve) => stream.write('', () => resolve()))));
  process.exit(code);
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('/src/cli/main.ts')) {
  main(process.argv.slice(2)).then(
    (code) => exitAfterFlush(code),
    (err: unknown) => {
      process.stderr.write(`azflex: internal error: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
      return exitAfterFlush(1);
    },
  );
}
