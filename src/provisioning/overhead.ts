/**
 * What an instance type offers to pods: capacity from the catalog and the NodeClass, minus
 * what the kubelet and system daemons keep back (kube-reserved + eviction threshold).
 */
import type { AzureFlexNodeClassSpec } from '../ports/cluster.js';
import type { InstanceType } from '../catalog/skus.js';
import {
  RESOURCE_CPU, RESOURCE_EPHEMERAL_STORAGE, RESOURCE_GPU, RESOURCE_MEMORY, RESOURCE_PODS, type Resources,
} from './resources.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** Pods per node: the SKU's ceiling, lowered by the NodeClass's maxPodsPerNode when set. */
export function maxPodsFor(instanceType: InstanceType, nodeClass: Pick<AzureFlexNodeClassSpec, 'maxPodsPerNode'> | undefined): number {
  const fromClass = nodeClass?.maxPodsPerNode ?? 0;
  return fromClass > 0 ? Math.min(fromClass, instanceType.maxPods) : instanceType.maxPods;
}

/**
 * Node capacity as the kubelet will report it. Ephemeral storage is the OS disk, which the
 * NodeClass sizes (osDiskSizeGB); the catalog's temp-disk figure is only a fallback.
 */
export function instanceTypeCapacity(
  instanceType: InstanceType,
  nodeClass: Pick<AzureFlexNodeClassSpec, 'maxPodsPerNode' | 'osDiskSizeGB'> | undefined,
): Resources {
  const diskGiB = nodeClass && nodeClass.osDiskSizeGB > 0 ? nodeClass.osDiskSizeGB : instanceType.ephemeralStorageGiB;
  return {
    [RESOURCE_CPU]: instanceType.vcpu * 1000,
    [RESOURCE_MEMORY]: instanceType.memoryMiB * MiB,
    [RESOURCE_GPU]: instanceType.gpuCount,
    [RESOURCE_PODS]: maxPodsFor(instanceType, nodeClass),
    [RESOURCE_EPHEMERAL_STORAGE]: diskGiB * GiB,
  };
}

/**
 * AKS kube-reserved: CPU 6% of the first core, 1% of the second, 0.5% of the next two and
 * 0.25% beyond four; memory 20 MiB per pod + 50 MiB (capped at 25% of RAM) plus the 100 MiB
 * hard-eviction threshold. Approximate on purpose: it only needs to keep the scheduler from
 * promising pods room the kubelet will not give them.
 */
export function defaultKubeReserved(instanceType: InstanceType, maxPods: number): Resources {
  const cores = instanceType.vcpu;
  let cpuMilli = 60;
  if (cores > 1) cpuMilli += 10;
  if (cores > 2) cpuMilli += 5 * Math.min(cores - 2, 2);
  if (cores > 4) cpuMilli += 2.5 * (cores - 4);
  const memoryBytes = instanceType.memoryMiB * MiB;
  const reservedMemory = Math.min((20 * maxPods + 50) * MiB, Math.floor(memoryBytes / 4)) + 100 * MiB;
  return { [RESOURCE_CPU]: Math.ceil(cpuMilli), [RESOURCE_MEMORY]: reservedMemory };
}
