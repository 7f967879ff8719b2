// Types of build.mjs (plain JavaScript, so that bin.mjs can run it before any build).
export declare const CLI_ENTRY: string;
export declare function newestSourceTime(path: string): number;
export declare function cliBuildIsStale(): boolean;
export declare function buildCli(options?: { clean?: boolean }): Promise<void>;
export declare function buildServer(): Promise<void>;
