export declare function diffChartCrds(): Promise<string[]>;
