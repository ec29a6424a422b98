export declare function pruneDeps(root: string): number;
