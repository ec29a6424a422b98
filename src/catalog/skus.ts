/**
 * The SKU catalog: what an instance type offers and where. The static catalog covers the
 * seed's SKUs; src/azure/resource-skus.ts implements the same interface from the Resource
 * SKUs API. Prices are list prices in USD/hour (eastus2, Linux, on-demand) used only to
 * prefer the cheapest fitting SKU.
 */
export interface InstanceType {
  name: string;
  /** VM family as Azure's core quota counts it (e.g. standardNDSH200v5Family). */
  family: string;
  vcpu: number;
  memoryMiB: number;
  gpuCount: number;
  gpuModel?: string;
  gpuMemoryGiB?: number;
  maxPods: number;
  ephemeralStorageGiB: number;
  arch: 'amd64' | 'arm64';
  pricePerHour: number;
  locations: string[];
  /**
   * Availability zones per location, as node label values ("eastus2-1"). A location without
   * an entry is regional: its nodes carry no topology.kubernetes.io/zone label.
   */
  zones?: Readonly<Record<string, readonly string[]>>;
}

export interface InstanceTypeCatalog {
  list(): Promise<InstanceType[]>;
  get(name: string): Promise<InstanceType | undefined>;
}

export const STATIC_INSTANCE_TYPES: readonly InstanceType[] = [
  {
    name: 'Standard_ND96isr_H200_v5', family: 'standardNDSH200v5Family', vcpu: 96, memoryMiB: 1850 * 1024,
    gpuCount: 8, gpuModel: 'H200', gpuMemoryGiB: 141, maxPods: 110, ephemeralStorageGiB: 28000, arch: 'amd64',
    pricePerHour: 110.24, locations: ['eastus2', 'eastus2euap', 'swedencentral', 'uksouth', 'westus3'],
  },
  {
    name: 'Standard_ND96amsr_A100_v4', family: 'standardNDAMSv4_A100Family', vcpu: 96, memoryMiB: 1900 * 1024,
    gpuCount: 8, gpuModel: 'A100', gpuMemoryGiB: 80, maxPods: 110, ephemeralStorageGiB: 6400, arch: 'amd64',
    pricePerHour: 32.77, locations: ['eastus', 'eastus2', 'southcentralus', 'westus2', 'westeurope'],
  },
  {
    name: 'Standard_NC40ads_H100_v5', family: 'standardNCadsH100v5Family', vcpu: 40, memoryMiB: 320 * 1024,
    gpuCount: 1, gpuModel: 'H100', gpuMemoryGiB: 94, maxPods: 110, ephemeralStorageGiB: 3576, arch: 'amd64',
    pricePerHour: 6.98, locations: ['eastus', 'eastus2', 'southcentralus', 'westeurope', 'swedencentral'],
  },
  {
    name: 'Standard_NC24ads_A100_v4', family: 'standardNCADSA100v4Family', vcpu: 24, memoryMiB: 220 * 1024,
    gpuCount: 1, gpuModel: 'A100', gpuMemoryGiB: 80, maxPods: 110, ephemeralStorageGiB: 958, arch: 'amd64',
    pricePerHour: 3.67, locations: ['eastus', 'eastus2', 'southcentralus', 'westeurope', 'westus2'],
  },
  {
    name: 'Standard_D8s_v5', family: 'standardDSv5Family', vcpu: 8, memoryMiB: 32 * 1024,
    gpuCount: 0, maxPods: 110, ephemeralStorageGiB: 128, arch: 'amd64',
    pricePerHour: 0.384, locations: ['eastus', 'eastus2', 'eastus2euap', 'westeurope', 'swedencentral', 'westus2'],
  },
];

export class StaticInstanceTypeCatalog implements InstanceTypeCatalog {
  private readonly byName: Map<string, InstanceType>;
  constructor(private readonly types: readonly InstanceType[] = STATIC_INSTANCE_TYPES) {
    this.byName = new Map(types.map((t) => [t.name.toLowerCase(), t]));
  }
  async list(): Promise<InstanceType[]> {
    return [...this.types];
  }
  async get(name: string): Promise<InstanceType | undefined> {
    return this.byName.get(name.toLowerCase());
  }
}
