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
