/**
 * Property tests for volume topology and zones, against an independent restatement:
 *   - every pod planned onto a NodeClaim can use its volume on every node that NodeClaim may
 *     become (each option SKU, in each zone the claim allows it, or regional when it has none);
 *   - no NodeClaim may land in a zone marked unavailable for its SKU;
 *   - a pod whose claim cannot bind yet (Immediate, missing, being deleted) is never planned,
 *     and says why;
 *   - a pod whose volume some NodePool can reach (its region offers the disk's zone, or has
 *     no zone for a regional disk) is planned.
 */
import fc from 'fast-check';
import { coverageApplies, propertyParams } from './params.js';
import { describe, expect, it } from 'vitest';
import { STATIC_INSTANCE_TYPES, zonesIn } from '../../src/catalog/skus.js';
import { LABEL_DISK_CSI_ZONE, LABEL_REGION, LABEL_ZONE } from '../../src/apis/well-known.js';
import type { PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from '../../src/ports/cluster.js';
import { Requirements } from '../../src/provisioning/requirements.js';
import { podKey, schedule, type SchedulingInput } from '../../src/provisioning/scheduler.js';
import { VolumeTopology } from '../../src/provisioning/volume-topology.js';
import { T0, iso, makeNodeClass, makeNodePool, makePod } from '../provisioning/fixtures.js';

/** eastus2euap is regional in the static catalog; the others have three zones. */
const LOCATIONS = ['eastus2', 'westeurope', 'eastus2euap'] as const;
const ZONES = ['eastus2-1', 'eastus2-2', 'eastus2-3', 'westeurope-1', 'westeurope-2', 'westeurope-3', 'uksouth-1'];
const D8 = STATIC_INSTANCE_TYPES.find((t) => t.name === 'Standard_D8s_v5')!;

const volumeArb = fc.oneof(
  fc.record({ kind: fc.constant('zonal' as const), zone: fc.constantFrom(...ZONES), csiKey: fc.boolean() }),
  fc.record({ kind: fc.constant('regional' as const) }),
  fc.record({ kind: fc.constant('wffc' as const), zones: fc.option(fc.subarray(ZONES, { minLength: 1, maxLength: 3 }), { nil: undefined }) }),
  fc.record({ kind: fc.constantFrom('immediate' as const, 'missing' as const, 'deleting' as const) }),
  fc.record({ kind: fc.constant('none' as const) }),
);
type Infer<A> = A extends fc.Arbitrary<infer T> ? T : never;
type VolumeSpec = Infer<typeof volumeArb>;

const scenarioArb = fc.record({
  pods: fc.array(fc.record({ volume: volumeArb, copies: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 8 }),
  pools: fc.uniqueArray(fc.record({ location: fc.constantFrom(...LOCATIONS), weight: fc.integer({ min: 0, max: 3 }) }), { minLength: 1, maxLength: 3, selector: (p) => p.location }),
  markedZones: fc.subarray(ZONES.slice(0, 6), { maxLength: 4 }),
});

const meta = (name: string) => ({ name, uid: `uid-${name}`, labels: {}, annotations: {}, finalizers: [], creationTimestamp: iso(T0) });

function build(scenario: Infer<typeof scenarioArb>): { input: SchedulingInput; volumeOf: Map<string, VolumeSpec> } {
  const claims: PersistentVolumeClaim[] = [];
  const volumes: PersistentVolume[] = [];
  const classes: StorageClass[] = [
    { metadata: meta('immediate'), provisioner: 'disk.csi.azure.com' },
    { metadata: meta('wffc'), provisioner: 'disk.csi.azure.com', volumeBindingMode: 'WaitForFirstConsumer' },
  ];
  const pods: Pod[] = [];
  const volumeOf = new Map<string, VolumeSpec>();
  scenario.pods.forEach(({ volume, copies }, s) => {
    for (let c = 0; c < copies; c++) {
      const name = `p${s}-${c}`;
      const claimName = `data-${name}`;
      const claim = (spec: PersistentVolumeClaim['spec'], deleting = false): PersistentVolumeClaim => ({
        metadata: { ...meta(claimName), namespace: 'default', ...(deleting ? { deletionTimestamp: iso(T0) } : {}) }, spec, status: {},
      });
      switch (volume.kind) {
        case 'zonal':
        case 'regional': {
          const zone = volume.kind === 'zonal' ? volume.zone : '';
          const key = volume.kind === 'zonal' && !volume.csiKey ? LABEL_ZONE : LABEL_DISK_CSI_ZONE;
          volumes.push({ metadata: meta(`pv-${name}`), spec: { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key, operator: 'In', values: [zone] }] }] } } } });
          claims.push(claim({ storageClassName: 'wffc', volumeName: `pv-${name}` }));
          break;
        }
        case 'wffc':
          if (volume.zones) classes.push({ ...classes[1]!, metadata: meta(`wffc-${name}`), allowedTopologies: [{ matchLabelExpressions: [{ key: LABEL_ZONE, values: volume.zones }] }] });
          claims.push(claim({ storageClassName: volume.zones ? `wffc-${name}` : 'wffc' }));
          break;
        case 'immediate':
          claims.push(claim({ storageClassName: 'immediate' }));
          break;
        case 'deleting':
          claims.push(claim({ storageClassName: 'wffc' }, true));
          break;
        default:
          break;
      }
      const pod = makePod(name, { requests: { cpu: '500m', memory: '512Mi' } });
      if (volume.kind !== 'none') pod.spec.volumes = [{ name: 'data', persistentVolumeClaim: { claimName } }];
      pods.push(pod);
      volumeOf.set(podKey(pod), volume);
    }
  });
  const topology = new VolumeTopology({ claims, volumes, classes });
  const marked = new Set(scenario.markedZones);
  return {
    volumeOf,
    input: {
      pendingPods: pods,
      nodePools: scenario.pools.map((p) => makeNodePool(p.location, {
        nodeClassName: p.location, weight: p.weight, requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: [D8.name] }],
      })),
      nodeClasses: LOCATIONS.map((l) => makeNodeClass(l, l)),
      instanceTypes: STATIC_INSTANCE_TYPES,
      existingNodeClaims: [],
      daemonSetPods: [],
      isOfferingUnavailable: () => false,
      isZoneUnavailable: (_sku, _region, zone) => marked.has(zone),
      volumeRequirements: (pod) => topology.requirements(pod),
    },
  };
}

/** Where the volume may be used, restated: a predicate on a node's region and zone (undefined: regional). */
function usableOn(volume: VolumeSpec, zone: string | undefined): boolean {
  switch (volume.kind) {
    case 'zonal': return zone === volume.zone;
    case 'regional': return zone === undefined;
    case 'wffc': return !volume.zones || (zone !== undefined && volume.zones.includes(zone));
    default: return true;
  }
}

describe('volume topology and zones (properties)', () => {
  it('plans every pod only where its volume can go, never in a marked zone, and holds unbindable claims', () => {
    // A pinned seed keeps the coverage check below stable; AZFLEX_PROPERTY_SEED explores others.
    const DEFAULTS = { numRuns: 300, seed: 20261123 };
    const params = propertyParams(DEFAULTS);
    const seen = { zonalPlanned: 0, regionalPlanned: 0, unreachable: 0, waiting: 0, markedAvoided: 0 };
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { input, volumeOf } = build(scenario);
        const result = schedule(input);
        const marked = new Set(scenario.markedZones);
        const planned = new Set<string>();
        for (const plan of result.nodeClaims) {
          const requirements = Requirements.fromSelectors(plan.requirements);
          const region = [...requirements.get(LABEL_REGION)!.values][0]!;
          const zoneReq = requirements.get(LABEL_ZONE);
          for (const option of plan.instanceTypeOptions) {
            const offered = zonesIn(option, region);
            // The nodes this claim may become: each allowed zone, or a regional node (a size
            // without zones there, or the regional fallback once every zone is marked: the
            // launch takes it for a claim that names no zone, src/lifecycle/nodeclaim/launch.ts).
            const unmarked = offered.filter((z) => !marked.has(z));
            const regional = offered.length === 0 || plan.requirements.some((r) => r.key === LABEL_ZONE && r.operator === 'DoesNotExist') || (!zoneReq && unmarked.length === 0);
            const nodes: Array<string | undefined> = regional ? [undefined] : offered.filter((z) => (zoneReq ? zoneReq.has(z) : !marked.has(z)));
            expect(nodes.length, `${plan.nodePoolName}: some node is possible`).toBeGreaterThan(0);
            for (const zone of nodes) {
              if (zone !== undefined) expect(marked.has(zone), `${zone} is marked`).toBe(false);
              for (const key of plan.podKeys) expect(usableOn(volumeOf.get(key)!, zone), `${key} (${JSON.stringify(volumeOf.get(key))}) on ${region}/${zone}`).toBe(true);
            }
            if (offered.some((z) => marked.has(z))) seen.markedAvoided++;
          }
          for (const key of plan.podKeys) {
            planned.add(key);
            const kind = volumeOf.get(key)!.kind;
            if (kind === 'zonal') seen.zonalPlanned++;
            if (kind === 'regional') seen.regionalPlanned++;
          }
        }
        const reachable = (volume: VolumeSpec): boolean => scenario.pools.some((p) => {
          const offered = zonesIn(D8, p.location).filter((z) => !marked.has(z));
          // No zones there, or every one marked (the regional fallback): a regional node.
          if (offered.length === 0) return usableOn(volume, undefined);
          return offered.some((z) => usableOn(volume, z));
        });
        for (const pod of input.pendingPods) {
          const key = podKey(pod);
          const volume = volumeOf.get(key)!;
          const unschedulable = result.unschedulable.find((u) => podKey(u.pod) === key);
          if (volume.kind === 'immediate' || volume.kind === 'missing' || volume.kind === 'deleting') {
            seen.waiting++;
            expect(planned.has(key)).toBe(false);
            expect(unschedulable?.reason).toMatch(/not bound yet|not found|being deleted/);
          } else if (reachable(volume)) {
            expect(planned.has(key), `${key} (${JSON.stringify(volume)}) is reachable: ${unschedulable?.reason}`).toBe(true);
          } else {
            seen.unreachable++;
            expect(planned.has(key)).toBe(false);
            expect(unschedulable?.reason.length).toBeGreaterThan(0);
          }
        }
      }),
      params,
    );
    if (coverageApplies(params, DEFAULTS)) expect(Object.values(seen).every((n) => n > 0), JSON.stringify(seen)).toBe(true);
  });
});
