// Types of scripts/build.mjs for the TypeScript that imports it (tests, the bench).
export declare const SERVICES: string[];
export declare const BENCH_TARGETS: string[];
/** Absolute path of a bundle's output file. */
export declare function bundlePath(name: string): string;
/** Absolute path of a bundle's TypeScript entry, for running it from source through tsx. */
export declare function sourcePath(name: string): string;
/** The node flags a bundle always runs with. */
export declare function bundleFlags(name: string): string[];
/** Bundles the named services or bench targets; resolves with what was built and how long it took. */
export declare function buildBundles(names?: string[]): Promise<{ names: string[]; ms: number }>;
/** Builds the dashboard with Vite into services/dashboard/dist unless its sources are unchanged since the last build. */
export declare function buildDashboard(options?: {
  force?: boolean;
}): Promise<{ ms: number; skipped: boolean; initialJsGzipBytes: number }>;
/** Gzipped bytes of the JavaScript a first visit to the dashboard loads. */
export declare function initialJavaScriptGzipBytes(dist: string): number;
/** The line the build prints about the dashboard. */
export declare function describeDashboardBuild(built: { ms: number; skipped: boolean; initialJsGzipBytes: number }): string;
