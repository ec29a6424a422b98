import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The REST models of the official SDK packages (@azure/arm-compute, @azure/arm-network), read
 * from their published type declarations: which properties each model has, which are required,
 * their types and the closed enums. The fake ARM validates request bodies against these rather
 * than against a second, hand-written schema, so a model change in the SDK reaches it.
 *
 * The declarations are generated from the REST specification (TypeSpec) in one regular form:
 * `export interface Name [extends A, B] {` with one `[readonly ]name[?]: Type;` per line, and
 * `export type Name = "a" | "b";` for a closed enum (an extensible one is `= string`).
 */

/** The type of one property, as the declarations spell it. */
export type SdkType =
  | { kind: 'string' | 'number' | 'boolean' | 'any' }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'array'; of: SdkType }
  | { kind: 'map'; of: SdkType }
  | { kind: 'model'; name: string };

export interface SdkProperty {
  type: SdkType;
  required: boolean;
  /** Set by the service; ARM ignores it in a request. */
  readOnly: boolean;
}

export interface SdkModel {
  name: string;
  properties: ReadonlyMap<string, SdkProperty>;
}

interface RawInterface {
  bases: string[];
  members: Array<{ name: string; type: string; required: boolean; readOnly: boolean }>;
}

/** One package's models, parsed once. */
export class SdkModels {
  private readonly interfaces = new Map<string, RawInterface>();
  private readonly aliases = new Map<string, string>();
  private readonly resolved = new Map<string, SdkModel>();

  constructor(readonly packageName: string, sources: readonly string[]) {
    for (const text of sources) this.parse(text);
  }

  /** Loads every `models.d.ts` the installed package ships under dist/esm/models. */
  static load(packageName: '@azure/arm-compute' | '@azure/arm-network'): SdkModels {
    const entry = createRequire(import.meta.url).resolve(packageName);
    const modelsDir = join(dirname(entry), '..', 'esm', 'models');
    const files = (readdirSync(modelsDir, { recursive: true }) as string[]).filter((f) => f.endsWith('models.d.ts')).sort();
    return new SdkModels(packageName, files.map((f) => readFileSync(join(modelsDir, f), 'utf8')));
  }

  has(name: string): boolean {
    return this.interfaces.has(name);
  }

  /** The model with its bases' properties merged in; undefined when the package has none of that name. */
  model(name: string): SdkModel | undefined {
    const cached = this.resolved.get(name);
    if (cached) return cached;
    const raw = this.interfaces.get(name);
    if (!raw) return undefined;
    const properties = new Map<string, SdkProperty>();
    for (const base of raw.bases) for (const [k, v] of this.model(base)?.properties ?? []) properties.set(k, v);
    for (const m of raw.members) properties.set(m.name, { type: this.typeOf(m.type), required: m.required, readOnly: m.readOnly });
    const model = { name, properties };
    this.resolved.set(name, model);
    return model;
  }

  private typeOf(text: string): SdkType {
    const t = text.trim();
    if (t.endsWith('[]')) return { kind: 'array', of: this.typeOf(t.slice(0, -2)) };
    const record = /^Record<string,\s*(.+)>$/.exec(t);
    if (record) return { kind: 'map', of: this.typeOf(record[1]!) };
    if (t === 'string' || t === 'Date') return { kind: 'string' };
    if (t === 'number') return { kind: 'number' };
    if (t === 'boolean') return { kind: 'boolean' };
    const literals = enumLiterals(t);
    if (literals) return { kind: 'enum', values: literals };
    if (this.interfaces.has(t)) return { kind: 'model', name: t };
    const alias = this.aliases.get(t);
    if (alias !== undefined && alias !== t) return this.typeOf(alias);
    return { kind: 'any' };
  }

  private parse(text: string): void {
    for (const m of text.matchAll(/^export type (\w+) = ([^;]+);$/gm)) this.aliases.set(m[1]!, m[2]!);
    for (const m of text.matchAll(/^export interface (\w+)(?: extends ([\w, ]+))? \{\n([\s\S]*?)^\}/gm)) {
      if (this.interfaces.has(m[1]!)) continue;
      const members: RawInterface['members'] = [];
      for (const line of m[3]!.split('\n')) {
        const p = /^ {4}(readonly )?(\w+)(\?)?: (.+);$/.exec(line);
        if (p) members.push({ name: p[2]!, type: p[4]!, required: p[3] === undefined, readOnly: p[1] !== undefined });
      }
      this.interfaces.set(m[1]!, { bases: m[2] ? m[2].split(',').map((b) => b.trim()) : [], members });
    }
  }
}

/** `"a" | "b"` as its string values; undefined for any other type expression. */
function enumLiterals(t: string): string[] | undefined {
  const parts = t.split('|').map((p) => p.trim());
  if (!parts.every((p) => /^"[^"]*"$/.test(p))) return undefined;
  return parts.map((p) => p.slice(1, -1));
}
