import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

/**
 * Reading user files for `azflex simulate` without trusting them: regular files only (no
 * FIFOs or devices that block or never end), a size cap checked before and while reading,
 * and YAML with few aliases (a "billion laughs" file expands exponentially).
 */
export const MAX_INPUT_FILE_BYTES = 1024 * 1024;
export const MAX_YAML_ALIASES = 100;
export const MAX_YAML_DOCUMENTS = 1000;

export class InputFileError extends Error {
  override readonly name = 'InputFileError';
}

export function readBoundedFile(path: string, maxBytes = MAX_INPUT_FILE_BYTES): string {
  let fd: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new InputFileError(`${path}: not a regular file`);
    if (st.size > maxBytes) throw new InputFileError(`${path}: ${st.size} bytes, more than the ${maxBytes}-byte limit`);
    fd = openSync(path, 'r');
  } catch (err) {
    if (err instanceof InputFileError) throw err;
    throw new InputFileError(`${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new InputFileError(`${path}: not a regular file`);
    const buf = Buffer.alloc(maxBytes + 1);
    let n = 0;
    for (let r = -1; r !== 0 && n <= maxBytes; n += r) r = readSync(fd, buf, n, buf.length - n, null);
    if (n > maxBytes) throw new InputFileError(`${path}: more than the ${maxBytes}-byte limit`);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Every document of a YAML (or JSON) text, as plain values; one precise error otherwise. */
export function parseYamlDocuments(text: string, source: string): unknown[] {
  const docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: false });
  if (!Array.isArray(docs)) return [];
  if (docs.length > MAX_YAML_DOCUMENTS) throw new InputFileError(`${source}: more than ${MAX_YAML_DOCUMENTS} YAML documents`);
  const out: unknown[] = [];
  for (const doc of docs) {
    const err = doc.errors[0];
    if (err) throw new InputFileError(`${source}: not valid YAML: ${err.message.split('\n')[0]}`);
    try {
      const value: unknown = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
      if (value !== null && value !== undefined) out.push(value);
    } catch (e) {
      throw new InputFileError(`${source}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  return out;
}
