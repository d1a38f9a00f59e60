// Rewrites the JavaScript that `tsc -p tsconfig.build.json` put in dist/ as one file per entry point of package.json
// (its `exports` and its `bin`) plus shared chunks, and leaves tsc's declarations where they are. Node then reads a
// handful of files instead of about two hundred when an app starts. A module lives in exactly one chunk, so a class
// is the same class from every entry point and `instanceof` holds across them. tsc's source maps are carried over,
// so stack traces and debuggers still lead to lib/.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { build } from 'rolldown';

const root = join(import.meta.dirname, '..');
const dist = join(root, 'dist');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** `index`, `testing/index`, `cli`…: every JavaScript file of dist/ that package.json points to, without `.js`. */
const entryPoints = [
  ...Object.values(manifest.exports).map((target) => (typeof target === 'string' ? target : target.default)),
  ...Object.values(manifest.bin),
]
  .filter((target) => target.startsWith('./dist/') && target.endsWith('.js'))
  .map((target) => target.slice('./dist/'.length, -'.js'.length));

/** Hands the bundler each file with tsc's source map, so the bundle's maps lead back to lib/. */
const tscSourceMaps = {
  name: 'tsc-source-maps',
  load(id) {
    if (!id.startsWith(dist) || !id.endsWith('.js')) return null;
    const map = `${id}.map`;
    return { code: readFileSync(id, 'utf8'), map: existsSync(map) ? readFileSync(map, 'utf8') : null };
  },
};

const bundled = mkdtempSync(join(tmpdir(), 'nestjs-payouts-bundle-'));
await build({
  input: Object.fromEntries(entryPoints.map((entry) => [entry, join(dist, `${entry}.js`)])),
  // Peers and Node's own modules stay imports: the app's copies must be the ones used.
  external: (id) => !id.startsWith('.') && !id.startsWith('/'),
  platform: 'node',
  plugins: [tscSourceMaps],
  output: {
    dir: bundled,
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    sourcemap: true,
    // The maps are written here and read from dist/: their paths to lib/ must start from there.
    sourcemapPathTransform: (source, map) =>
      relative(dirname(join(dist, relative(bundled, map))), resolve(dirname(map), source)),
  },
});

for (const file of readdirSync(dist, { recursive: true })) {
  if (file.endsWith('.js') || file.endsWith('.js.map')) rmSync(join(dist, file));
}
cpSync(bundled, dist, { recursive: true });
rmSync(bundled, { recursive: true, force: true });
console.log(`bundled ${entryPoints.length} entry points into ${relative(root, dist)}/`);
