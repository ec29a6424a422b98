import { HttpError } from './rest-errors.js';
import { SdkModels, type SdkModel, type SdkType } from './sdk-models.js';

/**
 * Request bodies checked against the published REST model of their resource provider, as the
 * official SDK packages declare it (sdk-models.ts): every property the body sends that the
 * model knows must have the model's type (string, number, boolean, object, array, a value of
 * a closed enum), and every property the model requires must be there. Properties the model
 * does not know are ignored, as ARM ignores them. A body is refused whole, never repaired.
 *
 * The one thing the declarations leave out is numeric bounds; the few a controller could get
 * wrong are in BOUNDS, each from the REST specification (docs/fidelity.md).
 */

type Provider = 'Microsoft.Compute' | 'Microsoft.Network';

interface Violation {
  kind: 'missing' | 'type' | 'bound';
  /** JSON path in the body, e.g. properties.storageProfile.osDisk.createOption. */
  path: string;
  /** What was wrong, in the words ARM's deserializer uses. */
  detail: string;
}

/** Numeric bounds of the REST specification that the SDK declarations do not carry: `model.property` → [min, max]. */
const BOUNDS: Readonly<Record<string, readonly [number, number]>> = {
  // Microsoft.Network networkInterface.json: privateIPAddressPrefixLength, minimum 1, maximum 128.
  'NetworkInterfaceIPConfigurationPropertiesFormat.privateIPAddressPrefixLength': [1, 128],
};

const loaded = new Map<Provider, SdkModels>();

function models(provider: Provider): SdkModels {
  let m = loaded.get(provider);
  if (!m) loaded.set(provider, (m = SdkModels.load(provider === 'Microsoft.Compute' ? '@azure/arm-compute' : '@azure/arm-network')));
  return m;
}

/** A VM PUT's body against Compute's VirtualMachine model; throws ARM's 400 on the first violation. */
export function validateVmPut(body: unknown): void {
  refuse('Microsoft.Compute', check(models('Microsoft.Compute'), 'VirtualMachine', body));
}

/** A NIC PUT's body against Network's NetworkInterface model; throws ARM's 400 on any violation. */
export function validateNicPut(body: unknown): void {
  refuse('Microsoft.Network', check(models('Microsoft.Network'), 'NetworkInterface', body));
}

/** A PATCH of a NIC's tags against Network's TagsObject model. */
export function validateNicPatch(body: unknown): void {
  refuse('Microsoft.Network', check(models('Microsoft.Network'), 'TagsObject', body));
}

/** A PATCH of a VM against Compute's VirtualMachineUpdate model. */
export function validateVmPatch(body: unknown): void {
  refuse('Microsoft.Compute', check(models('Microsoft.Compute'), 'VirtualMachineUpdate', body));
}

/** Every violation of `body` against model `name` (a missing `location` is left to ARM's own LocationRequired). */
export function check(sdk: SdkModels, name: string, body: unknown): Violation[] {
  const out: Violation[] = [];
  walkModel(sdk, sdk.model(name)!, body, '', out);
  return out.filter((v) => v.path !== 'location');
}

function walkModel(sdk: SdkModels, model: SdkModel, value: unknown, path: string, out: Violation[]): void {
  if (value === null || value === undefined) return;
  if (typeof value !== 'object' || Array.isArray(value)) {
    out.push({ kind: 'type', path, detail: `Error converting value ${JSON.stringify(value)} to type '${model.name}'` });
    return;
  }
  const doc = value as Record<string, unknown>;
  // A flattened model (x-ms-client-flatten): its wire `properties` object is the model's <Name>Properties[Format].
  if (!model.properties.has('properties') && doc['properties'] !== undefined) {
    const inner = sdk.model(`${model.name}Properties`) ?? sdk.model(`${model.name}PropertiesFormat`);
    if (inner) walkModel(sdk, inner, doc['properties'], join(path, 'properties'), out);
  }
  for (const [key, prop] of model.properties) {
    if (prop.readOnly) continue;
    const v = doc[key];
    const at = join(path, key);
    if (v === undefined || v === null) {
      if (prop.required) out.push({ kind: 'missing', path: at, detail: `Required property '${key}' not found in JSON` });
      continue;
    }
    walkType(sdk, prop.type, v, at, out);
    const bound = BOUNDS[`${model.name}.${key}`];
    if (bound && typeof v === 'number' && (v < bound[0] || v > bound[1])) {
      out.push({ kind: 'bound', path: at, detail: `The value ${v} is outside the range ${bound[0]} to ${bound[1]}` });
    }
  }
}

function walkType(sdk: SdkModels, type: SdkType, v: unknown, path: string, out: Violation[]): void {
  const wrong = (what: string): void => void out.push({ kind: 'type', path, detail: `Error converting value ${JSON.stringify(v)} to type '${what}'` });
  switch (type.kind) {
    case 'any':
      return;
    case 'string':
    case 'number':
    case 'boolean':
      if (typeof v !== type.kind || (type.kind === 'number' && !Number.isFinite(v))) wrong(type.kind);
      return;
    case 'enum':
      if (typeof v !== 'string' || !type.values.includes(v)) wrong(type.values.join(' | '));
      return;
    case 'array':
      if (!Array.isArray(v)) return wrong('array');
      v.forEach((item, i) => walkType(sdk, type.of, item, `${path}[${i}]`, out));
      return;
    case 'map':
      if (typeof v !== 'object' || Array.isArray(v)) return wrong('object');
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) walkType(sdk, type.of, item, join(path, k), out);
      return;
    case 'model':
      walkModel(sdk, sdk.model(type.name)!, v, path, out);
      return;
  }
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/**
 * ARM's answers: Compute refuses a missing required property or a value out of bounds with
 * InvalidParameter (target: the property) and a value its deserializer cannot convert with
 * InvalidRequestContent; Network answers any of them InvalidRequestFormat "Cannot parse the
 * request." with one detail per problem.
 */
function refuse(provider: Provider, violations: readonly Violation[]): void {
  if (violations.length === 0) return;
  if (provider === 'Microsoft.Network') {
    const details = violations.map((v) => ({ code: 'InvalidRequestFormat', message: `${v.detail}. Path '${v.path}'.` }));
    throw new HttpError(400, 'InvalidRequestFormat', 'Cannot parse the request.', {}, undefined, details);
  }
  const first = violations.find((v) => v.kind === 'type') ?? violations[0]!;
  if (first.kind === 'type') {
    throw new HttpError(400, 'InvalidRequestContent', `The request content was invalid and could not be deserialized: '${first.detail}. Path '${first.path}'.'.`);
  }
  const target = first.path.split('.').slice(-2).join('.').replace(/^properties\./, '');
  if (first.kind === 'missing') throw new HttpError(400, 'InvalidParameter', `Required parameter '${target}' is missing (null).`, {}, target);
  throw new HttpError(400, 'InvalidParameter', `${first.detail} for parameter '${target}'.`, {}, target);
}
