export declare const GO_SDK_MODULES: Record<string, string>;
/** The cached Go SDK client binary (built on first use) and the build's wall time in ms (0 when cached). */
export declare function ensureGoArmClient(): Promise<{ binary: string; buildMs: number }>;
