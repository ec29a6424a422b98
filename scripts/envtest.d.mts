export declare const K8S_VERSION: string;
export declare const ETCD_VERSION: string;
export declare const ENVTEST_VERSION: string;
export declare function cacheRoot(): string;
export interface EnvtestPaths {
  assetsDir: string;
  source: 'KUBEBUILDER_ASSETS' | 'PATH' | 'cache' | 'built';
  etcd: string;
  kubeApiserver: string;
  kubeScheduler: string;
  helm: string;
  kubectl: string;
}
export declare function ensureEnvtest(): Promise<EnvtestPaths>;
