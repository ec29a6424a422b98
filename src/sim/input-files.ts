import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { CORE_SCHEMA, loadAll, mergeTag, YAMLException } from 'js-yaml';

/**
 * Reading user files for `azflex simulate` without trusting them: regular files only (no
 * FIFOs or devices that block or never end), a size cap checked before and while reading,
 * UTF-8 text only, YAML with few aliases whose expansion stays small (a "billion laughs"
 * file expands exponentially; an alias inside its own anchor makes a cycle), and shallow
 * nesting (a file of 100,000 "[" would overflow a recursive walk's stack).
 *
 * Parsed with js-yaml rather than the `yaml` package the rest of the code uses, for the
 * measured reason that a bad file just under the cap must still be refused within a second
 * and 200 MB: measured with process.cpuUsage() and maxRSS, `yaml`'s parseAllDocuments spends
 * 2.1 s of CPU and +200 MB on a 1 MiB multi-document file (its CST and AST) and 2.1 s and
 * +300 MB on a 400 kB flow list, js-yaml 0.45 s / +70 MB and 0.28 s / +60 MB. js-yaml is
 * also what @kubernetes/client-node reads manifests with. The schema is YAML 1.2 core plus merge keys (`<<`), as kubectl reads
 * manifests; other tags (`!!binary`, `!!js/function`, custom ones) are refused.
 */
export const MAX_INPUT_FILE_BYTES = 1024 * 1024;
export const MAX_YAML_ALIASES = 100;
export const MAX_YAML_DOCUMENTS = 1000;
/** Deepest nesting of collections a file may have. */
export const MAX_YAML_NESTING = 64;
/** Values (scalars and collections) a file may hold once its aliases are expanded: what validators walk. */
export const MAX_YAML_VALUES = 1_000_000;

const SCHEMA = CORE_SCHEMA.withTags(mergeTag);

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
  let buf: Buffer;
  try {
    if (!fstatSync(fd).isFile()) throw new InputFileError(`${path}: not a regular file`);
    buf = Buffer.alloc(maxBytes + 1);
    let n = 0;
    for (let r = -1; r !== 0 && n <= maxBytes; n += r) r = readSync(fd, buf, n, buf.length - n, null);
    if (n > maxBytes) throw new InputFileError(`${path}: more than the ${maxBytes}-byte limit`);
    buf = buf.subarray(0, n);
  } catch (err) {
    if (err instanceof InputFileError) throw err;
    throw new InputFileError(`${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  } finally {
    closeSync(fd);
  }
  if ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff)) throw new InputFileError(`${path}: UTF-16 text; save it as UTF-8`);
  const nul = buf.indexOf(0);
  if (nul >= 0) throw new InputFileError(`${path}: a binary file (a NUL byte at offset ${nul}), not YAML or JSON text`);
  try {
    return UTF8.decode(buf);
  } catch {
    throw new InputFileError(`${path}: not UTF-8 text`);
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Every document of a YAML (or JSON) text, as plain values; one precise error otherwise. */
export function parseYamlDocuments(text: string, source: string): unknown[] {
  let docs: unknown[];
  try {
    docs = loadAll(text, { schema: SCHEMA, maxDepth: MAX_YAML_NESTING, maxAliases: MAX_YAML_ALIASES, filename: source });
  } catch (e) {
    if (!(e instanceof YAMLException)) throw new InputFileError(`${source}: not valid YAML: ${String((e as Error).message ?? e).split('\n')[0]}`);
    const at = e.mark ? ` (line ${e.mark.line + 1}, column ${e.mark.column + 1})` : '';
    if (/maxDepth/.test(e.reason)) throw new InputFileError(`${source}: collections nested more than ${MAX_YAML_NESTING} levels deep${at}`);
    throw new InputFileError(`${source}: not valid YAML: ${e.reason}${at}`);
  }
  if (docs.length > MAX_YAML_DOCUMENTS) throw new InputFileError(`${source}: more than ${MAX_YAML_DOCUMENTS} YAML documents`);
  let values = 0;
  const sizes = new Map<object, number>();
  for (const doc of docs) {
    const n = expandedValues(doc, sizes, new Set());
    if (n < 0) throw new InputFileError(`${source}: a YAML alias refers to its own anchor (a cycle)`);
    values += n;
    if (values > MAX_YAML_VALUES) throw new InputFileError(`${source}: YAML aliases expand it to more than ${MAX_YAML_VALUES} values`);
  }
  return docs.filter((d) => d !== null && d !== undefined);
}

/**
 * How many values a walk of `v` visits, with shared (aliased) collections counted at each
 * use but computed once; -1 for a cycle. Stops counting early past MAX_YAML_VALUES.
 */
function expandedValues(v: unknown, sizes: Map<object, number>, open: Set<object>): number {
  if (v === null || typeof v !== 'object') return 1;
  const known = sizes.get(v);
  if (known !== undefined) return known;
  if (open.has(v)) return -1;
  open.add(v);
  let n = 1;
  for (const child of Object.values(v)) {
    const c = expandedValues(child, sizes, open);
    if (c < 0) return -1;
    n += c;
    if (n > MAX_YAML_VALUES) break;
  }
  open.delete(v);
  sizes.set(v, n);
  return n;
}
