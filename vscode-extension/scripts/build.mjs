// Bundles the extension with esbuild (and, with --tests, the unit and
// extension-host test suites). Usage: node scripts/build.mjs [--production] [--tests] [--watch]
import * as esbuild from 'esbuild';
import { fileURLToPath } from 'node:url';
import * as path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
const production = args.has('--production');

/** @type {esbuild.BuildOptions} */
const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode'],
  logLevel: 'warning',
};

const builds = [
  {
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    minify: production,
    sourcemap: production ? false : 'linked',
  },
];
if (args.has('--tests')) {
  builds.push(
    { ...common, entryPoints: ['test/unit/model.test.ts'], outfile: 'out/test/unit/model.test.js', sourcemap: 'inline' },
    { ...common, entryPoints: ['test/unit/manifest.test.ts'], outfile: 'out/test/unit/manifest.test.js', sourcemap: 'inline' },
    { ...common, entryPoints: ['test/unit/executable.test.ts'], outfile: 'out/test/unit/executable.test.js', sourcemap: 'inline' },
    { ...common, entryPoints: ['test/unit/vectors.test.ts'], outfile: 'out/test/unit/vectors.test.js', sourcemap: 'inline' },
    { ...common, entryPoints: ['test/unit/history.test.ts'], outfile: 'out/test/unit/history.test.js', sourcemap: 'inline' },
    { ...common, entryPoints: ['test/unit/consent.test.ts'], outfile: 'out/test/unit/consent.test.js', sourcemap: 'inline' },
    { ...common, entryPoints: ['test/unit/goalWait.test.ts'], outfile: 'out/test/unit/goalWait.test.js', sourcemap: 'inline' },
    { ...common, entryPoints: ['test/e2e/suite.ts'], outfile: 'out/test/e2e/suite.js', sourcemap: 'inline' },
  );
}

if (args.has('--watch')) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context(b)));
  await Promise.all(contexts.map((c) => c.watch()));
  console.log('watching…');
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
