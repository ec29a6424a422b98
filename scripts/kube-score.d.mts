export declare const KUBE_SCORE_MODULE: string;
export declare const KUBE_SCORE_VERSION: string;
/** The cached kube-score binary (built on first use) and the build's wall time in ms (0 when cached). */
export declare function ensureKubeScore(): Promise<{ binary: string; buildMs: number }>;
