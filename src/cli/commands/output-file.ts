import { closeSync, existsSync, openSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import { UsageError } from '../errors.js';

/**
 * A file `azflex simulate` writes after the run (`--report`, `--output-cluster`): checked
 * before hours of simulation, and written whole or not at all.
 */

/**
 * `path` must name a file that can be written: its directory exists and takes a new file
 * (probed with the same temporary file the output is written through), and the name is not a
 * directory, device or FIFO. A bad path is a UsageError (one line, exit 2).
 */
export function checkOutputPath(flag: string, path: string | undefined): void {
  if (path === undefined) return;
  if (path === '') throw new UsageError(`${flag} needs a file name`);
  const dir = dirname(resolvePath(path));
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new UsageError(`${flag} ${path}: directory ${dir} does not exist`);
  }
  if (!st.isDirectory()) throw new UsageError(`${flag} ${path}: ${dir} is not a directory`);
  if (existsSync(path) && !statSync(path).isFile()) throw new UsageError(`${flag} ${path}: not a regular file`);
  const probe = tempPath(path);
  try {
    closeSync(openSync(probe, 'wx'));
  } catch (err) {
    throw new UsageError(`${flag} ${path}: cannot write in ${dir} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  rmSync(probe, { force: true });
}

/** The temporary name, beside the file so that the rename onto it is atomic. */
function tempPath(path: string): string {
  return `${resolvePath(path)}.${process.pid}.tmp`;
}

/** Writes the whole file or nothing: a full disk leaves no half-written file behind (one line on stderr, exit code 1). */
export function writeOutput(flag: string, path: string, text: string): boolean {
  const tmp = tempPath(path);
  try {
    writeFileSync(tmp, text, { flag: 'wx' });
    renameSync(tmp, path);
    return true;
  } catch (err) {
    rmSync(tmp, { force: true });
    process.stderr.write(`azflex: ${flag} ${path}: cannot write (${(err as NodeJS.ErrnoException).code ?? String(err)})\n`);
    process.exitCode = 1;
    return false;
  }
}
