import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

/**
 * Reading user files for `azflex simulate` without trusting them: regular files only (no
 * FIFOs or devices that block or never end), a size cap checked before and while reading,
 * YAML with few aliases (a "billion laughs" file expands exponentially), and shallow
 * nesting (a file of 100,000 "[" overflows the parser's stack).
 */
export const MAX_INPUT_FILE_BYTES = 1024 * 1024;
export const MAX_YAML_ALIASES = 100;
export const MAX_YAML_DOCUMENTS = 1000;
/** Deepest nesting of collections a file may have (the YAML parser recurses once per level). */
export const MAX_YAML_NESTING = 64;

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
  const depth = nestingDepth(text);
  if (depth > MAX_YAML_NESTING) throw new InputFileError(`${source}: collections nested more than ${MAX_YAML_NESTING} levels deep`);
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

/**
 * An upper bound of the text's collection nesting, without parsing it: flow brackets open
 * outside quotes and comments, plus block levels (indentation, and the "- " or "? " markers
 * that start a nested entry on the same line). Overestimates only for odd but valid files.
 */
export function nestingDepth(text: string): number {
  let max = 0;
  let flow = 0;
  let quote: string | undefined;
  let lineStart = true;
  let indent = 0;
  let markers = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') {
      lineStart = true;
      indent = 0;
      markers = 0;
      continue;
    }
    if (lineStart) {
      if (c === ' ') {
        indent++;
        continue;
      }
      if ((c === '-' || c === '?') && (text[i + 1] === ' ' || text[i + 1] === '\n')) {
        markers++;
        indent++;
        continue;
      }
      lineStart = false;
      // Block levels: at least one column per level, plus the markers on this line.
      max = Math.max(max, flow + Math.ceil(indent / 2) + markers);
    }
    if (quote !== undefined) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || text[i - 1] === ' ' || text[i - 1] === '\t')) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end - 1;
    } else if (c === '[' || c === '{') max = Math.max(max, ++flow + Math.ceil(indent / 2) + markers);
    else if ((c === ']' || c === '}') && flow > 0) flow--;
  }
  return max;
}
