import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { NODECLASS_GROUP } from '../apis/well-known.js';
import { celViolation } from './crd-rules.js';
import { parseYamlDocuments, readBoundedFile } from './input-files.js';
import { ScenarioError } from './scenario.js';

/**
 * The API server's checks of a custom resource against its CRD, for the simulator: the served
 * version's openAPIV3Schema (unknown fields refused, as kubectl's default strict field
 * validation asks; defaults applied), then the CEL rules crd-rules.ts knows. Users' manifests
 * (manifests.ts) and every NodeClaim the controller creates in the fake cluster (cluster.ts)
 * go through it, so the fake refuses what the real API server refuses.
 */
export type CrdKind = 'AzureFlexNodeClass' | 'NodePool' | 'NodeClaim';
type Raw = Record<string, unknown>;

/** The object with the CRD's defaults filled in, or the first problem as "path: message". */
export type CrdCheck = { ok: true; object: Raw } | { ok: false; problem: string };

const CRD_DIR = fileURLToPath(new URL('../../crds/', import.meta.url));
const CRDS: Record<CrdKind, { file: string; group: string }> = {
  AzureFlexNodeClass: { file: 'flex.aks.azure.com_azureflexnodeclasses.yaml', group: NODECLASS_GROUP },
  NodePool: { file: 'karpenter.sh_nodepools.yaml', group: 'karpenter.sh' },
  NodeClaim: { file: 'karpenter.sh_nodeclaims.yaml', group: 'karpenter.sh' },
};
const validators = new Map<string, { validate: ValidateFunction; schema: Raw } | { served: string }>();

/**
 * Checks `object` (apiVersion, kind, spec…; metadata is the caller's to check) and fills in
 * its defaults in place, as the API server does on create: pass an object the caller owns.
 */
export function checkAgainstCrd(kind: CrdKind, object: Raw): CrdCheck {
  const compiled = crdValidator(kind, String(object.apiVersion));
  if ('served' in compiled) return { ok: false, problem: `apiVersion ${String(object.apiVersion)} is not served for ${kind} (served: ${compiled.served})` };
  const { validate, schema } = compiled;
  if (!validate(object)) {
    const e = validate.errors![0]!;
    const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.') || '(root)';
    const extra = e.keyword === 'additionalProperties' ? ` "${String((e.params as { additionalProperty?: string }).additionalProperty)}"` : e.keyword === 'enum' ? ` (${String((e.params as { allowedValues?: unknown[] }).allowedValues?.join(', '))})` : '';
    return { ok: false, problem: `${path}: ${e.message ?? 'invalid'}${extra}` };
  }
  // Then the CRD's CEL rules, as the API server evaluates them after the schema.
  const broken = celViolation(schema, object);
  return broken ? { ok: false, problem: broken } : { ok: true, object };
}

/** The served version's schema, compiled once per kind and apiVersion. */
function crdValidator(kind: CrdKind, apiVersion: string): { validate: ValidateFunction; schema: Raw } | { served: string } {
  const key = `${kind}/${apiVersion}`;
  const cached = validators.get(key);
  if (cached) return cached;
  const crd = CRDS[kind];
  const [doc] = parseYamlDocuments(readBoundedFile(join(CRD_DIR, crd.file)), crd.file) as Raw[];
  const versions = (((doc!.spec as Raw).versions as Raw[]) ?? []).filter((v) => v.served === true);
  const version = versions.find((v) => `${crd.group}/${String(v.name)}` === apiVersion);
  if (!version) {
    const unserved = { served: versions.map((v) => `${crd.group}/${String(v.name)}`).join(', ') };
    validators.set(key, unserved);
    return unserved;
  }
  const schema = strictSchema((version.schema as Raw).openAPIV3Schema as Raw);
  const ajv = new Ajv({ strict: false, useDefaults: true, validateFormats: false, allErrors: false });
  const compiled = { validate: ajv.compile(schema), schema };
  validators.set(key, compiled);
  return compiled;
}

/** Objects with declared properties refuse others, unless the schema preserves unknown fields. */
function strictSchema(s: Raw): Raw {
  const out: Raw = { ...s };
  if (out.properties && out.additionalProperties === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true) out.additionalProperties = false;
  if (out.properties) out.properties = Object.fromEntries(Object.entries(out.properties as Raw).map(([k, v]) => [k, strictSchema(v as Raw)]));
  if (out.items && typeof out.items === 'object') out.items = strictSchema(out.items as Raw);
  if (out.additionalProperties && typeof out.additionalProperties === 'object') out.additionalProperties = strictSchema(out.additionalProperties as Raw);
  return out;
}

/** The API server's checks of a user's manifest (`--manifests`), minus what the server owns; a problem is a ScenarioError naming `at`. */
export function checkManifest(o: Raw, kind: CrdKind, at: string): Raw {
  const copy = structuredClone(o);
  // The API server owns these; a manifest may carry them (from `kubectl get -o yaml`).
  delete copy.status;
  const meta = copy.metadata as Raw;
  for (const k of ['resourceVersion', 'uid', 'creationTimestamp', 'generation', 'managedFields', 'selfLink']) delete meta[k];
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = copy;
  const checked = checkAgainstCrd(kind, { apiVersion: copy.apiVersion, kind, metadata: {}, ...rest });
  if (!checked.ok) throw new ScenarioError(`${at}: ${checked.problem}`);
  return { ...checked.object, metadata: meta };
}
