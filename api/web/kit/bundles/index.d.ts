export declare const BROWSER_BUNDLES: Record<string, string>;
export declare const BROWSER_BUNDLE_OPTIONS: Record<string, unknown>;
