export declare function bundleApp(appDir: string): Promise<void>;
