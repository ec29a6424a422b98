/**
 * What an Azure VM size name says about the size, following Azure's published naming
 * convention (https://learn.microsoft.com/azure/virtual-machines/vm-naming-conventions):
 * `[Family][Sub-family]#vCPUs[-constrained][Additive features][_Accelerator][_Version]`.
 * The Azure Karpenter provider labels nodes from these parts (karpenter.azure.com/sku-family
 * is the family letter, sku-version the number after "v", with 1 for unversioned sizes), so
 * NodePools written for it select the same sizes here.
 */
export interface VmSizeParts {
  /** One letter: D, E, F, N, M, ... */
  family: string;
  /** Sub-family letters ("C" in NC, "D" in ND), possibly empty. */
  subfamily: string;
  /** Family + sub-family + additive features + "_v<n>", e.g. "Ds_v5", "NCads_v4". */
  series: string;
  /** "5" for ..._v5; "1" when the name carries no version. */
  version: string;
  /** The GPU named in the size (A100, H200, T4, MI300X), or known for the size. */
  accelerator?: string;
}

// Family, sub-family (up to two capitals), vCPUs, optional constrained vCPUs, lower-case
// additive features, optional "_NDR" (the InfiniBand generation, in ND GB200 v6's name),
// optional accelerator (capitals + digits), optional "_cc" (confidential child), optional
// version, optional "_Promo".
const SIZE = /^([A-Z])([A-Z]{0,2})(\d+)(?:-\d+)?([a-z]*)(?:_NDR)?(?:_([A-Z]+\d+[A-Z]*))?(?:_cc)?(?:_[vV](\d+))?(?:_Promo)?$/;

/** Sizes whose name does not carry their GPU; from the series pages on learn.microsoft.com. */
const ACCELERATOR_BY_SERIES: Readonly<Record<string, string>> = {
  NCs_v3: 'V100',
  NCrs_v3: 'V100',
  NDrs_v2: 'V100',
  NDasr_v4: 'A100',
  NVs_v3: 'M60',
  NVas_v4: 'MI25',
};

const AMD_ACCELERATORS = new Set(['MI25', 'MI300X', 'V710']);

/** Parsed once per name: the scheduler asks for every instance type of every pool. */
const parsed = new Map<string, VmSizeParts | undefined>();

export function parseVmSize(name: string): VmSizeParts | undefined {
  if (parsed.has(name)) return parsed.get(name);
  const parts = parse(name);
  // Bounded by the number of VM sizes Azure has (hundreds); unknown names from input are few.
  if (parsed.size < 10_000) parsed.set(name, parts);
  return parts;
}

function parse(name: string): VmSizeParts | undefined {
  const m = SIZE.exec(name.replace(/^(Standard|Basic)_/, ''));
  if (!m) return undefined;
  const [, family, subfamily, , features, named, version] = m as unknown as [string, string, string, string, string, string | undefined, string | undefined];
  const series = `${family}${subfamily}${features}${version ? `_v${version}` : ''}`;
  const accelerator = named ?? ACCELERATOR_BY_SERIES[series];
  return { family, subfamily, series, version: version ?? '1', ...(accelerator ? { accelerator } : {}) };
}

/** GPU maker as the provider's sku-gpu-manufacturer label spells it. */
export function gpuManufacturerOf(accelerator: string | undefined): 'nvidia' | 'amd' | undefined {
  if (!accelerator) return undefined;
  return AMD_ACCELERATORS.has(accelerator.toUpperCase()) ? 'amd' : 'nvidia';
}
