import type { Command } from 'commander';

/** Every subcommand registers itself here; one line per command file. */
export function registerCommands(program: Command): void {
  void program;
}
