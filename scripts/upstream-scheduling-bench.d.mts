export declare const SCHEDULING_PACKAGE: string;
/** Upstream's scheduling benchmark as a cached test binary (built on first use) and the build's wall time in ms (0 when cached). */
export declare function ensureUpstreamSchedulingBench(version?: string): Promise<{ version: string; binary: string; buildMs: number }>;
