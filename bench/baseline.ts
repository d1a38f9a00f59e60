import { isAbsolute, join, resolve } from 'node:path';
import { argValue } from './command-line.js';

/**
 * `--baseline=<dir>`: a checkout of an earlier commit, built (`npm run build && npx tsc -p bench/tsconfig.json`),
 * whose bench scripts run beside this one's in the same rounds. Returns the absolute path of one of its compiled
 * scripts (relative to `bench/dist/bench`), or undefined without the option.
 */
export function baselineScript(relativePath: string): string | undefined {
  const dir = argValue('baseline');
  if (dir === undefined) return undefined;
  return join(isAbsolute(dir) ? dir : resolve(dir), 'bench', 'dist', 'bench', relativePath);
}
