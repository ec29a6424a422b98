export declare const K8S_VERSION: string;
export declare const ETCD_VERSION: string;
export declare const ENVTEST_VERSION: string;
export declare const KWOK_VERSION: string;
export declare function cacheRoot(): string;
export interface EnvtestPaths {
  assetsDir: string;
  /** Where the control plane came from, e.g. "cache" or "KUBEBUILDER_ASSETS+cache". */
  source: string;
  etcd: string;
  kubeApiserver: string;
  kubeScheduler: string;
  kubeControllerManager: string;
  kwok: string;
  helm: string;
  kubectl: string;
}
export declare function ensureEnvtest(): Promise<EnvtestPaths>;
export declare function extractZipEntries(zipPath: string, wanted: Record<string, string> | ((name: string) => string | undefined), destDir: string): Promise<Record<string, string>>;
