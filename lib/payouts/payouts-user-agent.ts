import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * This package's own `package.json`: the nearest one above this file that names it, whether this file runs from the
 * sources or from the build, however deep either puts it.
 */
function ownManifest(): { name: string; version: string } {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { name?: unknown };
      if (manifest.name === 'nestjs-payouts') return manifest as { name: string; version: string };
    } catch {
      // No readable package.json here: look one folder up.
    }
    const parent = dirname(folder);
    if (parent === folder) throw new Error('nestjs-payouts: cannot find its own package.json');
    folder = parent;
  }
}

const { name, version } = ownManifest();

/** The version of this package, for the instrumentation scope of its telemetry. */
export const PAYOUTS_PACKAGE_VERSION = version;

/** Names the package and its version to the payouts API. */
export const PAYOUTS_USER_AGENT = `${name}/${version}`;
