import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Option, type Command } from 'commander';
import { MACHINE_NAMES, VIZ_FORMATS, type MachineName, type VizFormat } from '../../viz/names.js';
import { UsageError } from '../errors.js';

export interface VizFlags {
  machine: MachineName | 'all';
  format: VizFormat;
  out?: string;
}

export function register(program: Command): void {
  program
    .command('viz')
    .description('draw the lifecycle state machines from their XState definitions (offline)')
    .addOption(new Option('--machine <name>', 'which machine to draw').choices([...MACHINE_NAMES, 'all']).makeOptionMandatory())
    .addOption(new Option('--format <format>', 'output format').choices([...VIZ_FORMATS]).default('svg'))
    .option('--out <dir>', 'write <machine>.<ext> files into this directory instead of printing')
    .action(async (flags: VizFlags) => {
      await runViz(flags);
    });
}

export async function runViz(flags: VizFlags): Promise<void> {
  // The machines (XState and every machine definition) load only once the flags are good.
  const [{ machineGraph }, { diagramFileName, renderMachine }] = await Promise.all([import('../../viz/machines.js'), import('../../viz/render.js')]);
  const machines: readonly MachineName[] = flags.machine === 'all' ? MACHINE_NAMES : [flags.machine];
  if (flags.out !== undefined) {
    try {
      mkdirSync(flags.out, { recursive: true });
    } catch (err) {
      throw new UsageError(`--out ${flags.out}: cannot make that directory (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    for (const name of machines) {
      const path = join(flags.out, diagramFileName(name, flags.format));
      writeFileSync(path, await renderMachine(name, flags.format));
      process.stderr.write(`wrote ${path}\n`);
    }
    return;
  }
  if (machines.length === 1) {
    process.stdout.write(await renderMachine(machines[0] as MachineName, flags.format));
    return;
  }
  switch (flags.format) {
    case 'json': {
      // One JSON document holding every machine, so the output still parses.
      const graphs = Object.fromEntries(machines.map((name) => [name, machineGraph(name)]));
      process.stdout.write(`${JSON.stringify(graphs, null, 2)}\n`);
      return;
    }
    case 'dot':
      // A DOT file may hold several graphs; `dot -Tsvg -O` renders each.
      for (const name of machines) process.stdout.write(await renderMachine(name, 'dot'));
      return;
    case 'svg':
    case 'mermaid':
      throw new UsageError(
        `--machine all --format ${flags.format} makes one document per machine: add --out <dir>, or pick --machine ${MACHINE_NAMES.join('|')}`,
      );
  }
}
