export declare const KARPENTER_NEWEST: string;
export declare const KARPENTER_OLDEST: string;
export declare const KARPENTER_MODULE: string;
export declare const AWS_PROVIDER_MODULE: string;
export declare const AWS_PROVIDER_VERSION: string;
export declare function upstreamCacheRoot(): string;
export interface UpstreamFiles {
  version: string;
  dir: string;
  files: string[];
}
export declare function ensureKarpenterCrds(version?: string): Promise<UpstreamFiles>;
export declare function ensureUpstreamExamples(version?: string): Promise<UpstreamFiles>;
export declare function ensureUpstreamChartValues(version?: string): Promise<{ version: string; file: string }>;
/** One metric family as upstream's own code registers it. */
export interface UpstreamMetricFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'other';
  /** Sorted. */
  labels: string[];
  buckets?: number[];
}
export declare function ensureUpstreamMetrics(version?: string): Promise<{ version: string; file: string; families: UpstreamMetricFamily[] }>;
/** Copies the files of module@version that `pick` names (relative path in, path under dest or undefined out) into dest. */
export declare function fetchModuleFiles(module: string, version: string, pick: (rel: string) => string | undefined, dest: string): Promise<void>;
