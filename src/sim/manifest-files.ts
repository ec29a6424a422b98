import { existsSync, globSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { InputFileError, MAX_INPUT_FILE_BYTES, parseYamlDocuments, readBoundedFile } from './input-files.js';
import { arrayOf } from './manifest-pod-spec.js';
import { ScenarioError } from './scenario.js';

/**
 * What `azflex simulate --manifests` reads: the files `kubectl apply -f` would, each one's YAML
 * documents, and the objects in them (Lists opened), within bounds on files and bytes.
 */
export const MAX_MANIFEST_FILES = 1000;
/** All manifests together: parsing runs at about 0.07 s of CPU per MiB, so 8 MiB are refused (or read) within about a second. */
export const MAX_MANIFEST_BYTES = 8 * MAX_INPUT_FILE_BYTES;

type Raw = Record<string, unknown>;

/**
 * Each object of the files in order, null fields dropped, with where it is (file, and document
 * when not the first). Read lazily: a bad object is reported before the next file is read.
 */
export function* manifestItems(files: readonly string[]): Generator<{ item: unknown; where: string }> {
  let bytes = 0;
  for (const file of files) {
    const text = readOrThrow(file);
    bytes += text.length;
    if (bytes > MAX_MANIFEST_BYTES) throw new ScenarioError(`${file}: the manifests add up to more than ${MAX_MANIFEST_BYTES} bytes`);
    for (const [d, doc] of parseOrThrow(text, file).entries()) {
      const where = `${file}${d > 0 ? ` (document ${d + 1})` : ''}`;
      if (isKustomization(doc, file)) throw new ScenarioError(`${where}: a kustomization is kustomize's input, not an object to apply (kubectl apply -f refuses it too): pass what \`kubectl kustomize ${dirname(file)}\` prints instead`);
      for (const item of listItems(doc, where)) yield { item: withoutNulls(item), where };
    }
  }
}

/** The extensions `kubectl apply -f <dir>` reads, compared as it compares them (case matters). */
const MANIFEST_EXTENSIONS = new Set(['.json', '.yaml', '.yml']);
/** Directory entries a `-R` walk may look at: a walk of a huge tree is refused quickly instead of taking minutes. */
export const MAX_WALKED_ENTRIES = 100_000;

/**
 * The files `kubectl apply -f <paths> [-R]` reads, in its order: a file named explicitly
 * whatever its extension; a directory's `.json`, `.yaml` and `.yml` files in name order (other
 * files, a README, are left alone), and with `recursive` its subdirectories' too, depth first
 * as they come in that order (not followed through symlinks, as filepath.Walk does not); a path
 * that does not exist as a glob of `*`, `?` and `[...]`. A file reached twice is read once.
 */
export function manifestFiles(paths: readonly string[], recursive: boolean): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  let walked = 0;
  let skippedDirectory = false;
  const add = (file: string, given: string): void => {
    let real = file;
    try {
      real = realpathSync(file);
    } catch {
      // Left to the read, which names the problem.
    }
    if (seen.has(real)) return;
    seen.add(real);
    out.push(file);
    if (out.length > MAX_MANIFEST_FILES) throw new ScenarioError(`${given}: more than ${MAX_MANIFEST_FILES} manifest files`);
  };
  const walk = (dir: string, given: string): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (err) {
      throw new ScenarioError(`${dir}: cannot read manifests (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    walked += entries.length;
    if (walked > MAX_WALKED_ENTRIES) throw new ScenarioError(`${given}: more than ${MAX_WALKED_ENTRIES} files and directories to look through`);
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (recursive) walk(path, given);
        else skippedDirectory = true;
      } else if (MANIFEST_EXTENSIONS.has(extname(e.name))) add(path, given);
    }
  };
  const visit = (p: string, given: string): void => {
    if (p === '') throw new ScenarioError('--manifests "": an empty path');
    let st;
    try {
      st = statSync(p);
    } catch (err) {
      throw new ScenarioError(`${p}: cannot read manifests (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    if (st.isDirectory()) walk(p, given);
    else add(p, given);
  };
  for (const p of paths) {
    if (!existsSync(p) && /[*?[]/.test(p)) {
      if (p.includes('**')) throw new ScenarioError(`${p}: kubectl's patterns match within one directory (*, ?, [...]); for subdirectories pass the directory with -R`);
      const matches = globSync(p).sort();
      if (matches.length === 0) throw new ScenarioError(`${p}: the path does not exist and the pattern matches no file`);
      for (const m of matches) visit(m, p);
    } else visit(p, p);
  }
  if (out.length === 0) throw new ScenarioError(`${paths.join(', ')}: no .yaml, .yml or .json manifest files${skippedDirectory ? ' (pass -R for their subdirectories)' : ''}`);
  return out;
}

function readOrThrow(file: string): string {
  try {
    return readBoundedFile(file);
  } catch (err) {
    if (err instanceof InputFileError) throw new ScenarioError(err.message);
    throw err;
  }
}

function parseOrThrow(text: string, file: string): unknown[] {
  try {
    return parseYamlDocuments(text, file);
  } catch (err) {
    if (err instanceof InputFileError) throw new ScenarioError(err.message);
    throw err;
  }
}

/** `kind: List` (what `kubectl get -o yaml` prints) holds objects in `items` (none when null), Lists inside included. */
function listItems(doc: unknown, where: string): unknown[] {
  const o = doc as Raw;
  if (!o || typeof o !== 'object' || o.kind !== 'List' || Array.isArray(o)) return [doc];
  if (o.items !== undefined && o.items !== null && !Array.isArray(o.items)) throw new ScenarioError(`${where}: List: items must be a list`);
  return arrayOf(o.items).flatMap((item) => listItems(item, where));
}

/**
 * A null field is an absent one, as the API server decodes JSON (`replicas:` with no value
 * gets the default): maps lose their null entries, recursively.
 */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (v === null || typeof v !== 'object') return v;
  const out: Raw = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = withoutNulls(x);
  return out;
}

/** kustomize's own file: its kinds, or a document without apiVersion and kind in a file named as kustomize names it. */
function isKustomization(doc: unknown, file: string): boolean {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return false;
  const o = doc as Raw;
  if (typeof o.apiVersion === 'string' && o.apiVersion.startsWith('kustomize.config.k8s.io/')) return true;
  return /^(kustomization\.ya?ml|Kustomization)$/.test(basename(file)) && (o.apiVersion === undefined || o.kind === undefined);
}

