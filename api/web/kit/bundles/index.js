// The pages' scripts that are bundled from npm packages rather than served as written: their
// entry points and the esbuild options, shared by bin/build.js (which writes them to assets/ in
// a build) and api/web/kit/assets.ts (which bundles them on first use when running from sources).
export const BROWSER_BUNDLES = {
  'sql-editor.js': 'api/web/kit/bundles/sql-editor.js',
  'dashboard-chart.js': 'api/web/kit/bundles/dashboard-chart.js',
};

export const BROWSER_BUNDLE_OPTIONS = {
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  legalComments: 'none',
  logLevel: 'warning',
};
