import type { AzureFlexNodeClass, AzureFlexNodeClassSpec } from '../../src/ports/cluster.js';
import { SUB } from '../k8s/fixtures.js';

// A valid NodeClass spec, and the NodeClass around one, for the apis/ tests.

export const subnet = `/subscriptions/${SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`;

export function spec(over: Partial<AzureFlexNodeClassSpec> = {}): AzureFlexNodeClassSpec {
  return {
    subscriptionID: SUB,
    location: 'eastus2',
    resourceGroup: 'rg-flex',
    subnetID: subnet,
    imageReference: { publisher: 'microsoft-dsvm', offer: 'ubuntu-hpc', sku: '2204', version: 'latest' },
    securityType: 'Standard',
    osDiskSizeGB: 128,
    sshPublicKeys: [],
    allocateNodePublicIP: false,
    maxPodsPerNode: 110,
    tags: {},
    ...over,
  };
}

export function nodeClass(s: AzureFlexNodeClassSpec, meta: Partial<AzureFlexNodeClass['metadata']> = {}): AzureFlexNodeClass {
  return { metadata: { name: 'c', uid: 'u', labels: {}, annotations: {}, finalizers: [], creationTimestamp: '', ...meta }, spec: s, status: { conditions: [] } };
}
