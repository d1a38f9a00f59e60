import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

/** The repository's root, whose node_modules the scratch projects install from, so no network is needed. */
const ROOT = join(import.meta.dirname, '..', '..');

/** `npm pack` of the repository (built first with `npm run build`), in a directory of its own. */
export function packTarball(): { tarball: string; remove: () => void } {
  const destination = mkdtempSync(join(tmpdir(), 'payouts-docs-pack-'));
  const pack = ['pack', '--json', '--pack-destination', destination];
  const [{ filename }] = JSON.parse(execFileSync('npm', pack, { cwd: ROOT, encoding: 'utf8', timeout: 60_000 })) as [
    { filename: string },
  ];
  return { tarball: join(destination, filename), remove: () => rmSync(destination, { recursive: true, force: true }) };
}

/**
 * A new project in a directory outside the repository, as a reader makes one: `files` written as given, the packed
 * tarball installed as `nestjs-payouts`, and `packages` installed as links to this repository's copies (with their
 * commands in node_modules/.bin, as npm puts them), nothing else.
 */
export function createScratchProject(options: {
  tarball: string;
  packages: readonly string[];
  files: Record<string, string>;
}): string {
  const project = mkdtempSync(join(tmpdir(), 'payouts-docs-project-'));
  const installed = join(project, 'node_modules', 'nestjs-payouts');
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', options.tarball, '-C', installed, '--strip-components=1']);
  for (const name of options.packages) installFromRepository(project, name);
  for (const [path, text] of Object.entries(options.files)) {
    mkdirSync(dirname(join(project, path)), { recursive: true });
    writeFileSync(join(project, path), text);
  }
  return project;
}

function installFromRepository(project: string, name: string): void {
  const source = join(ROOT, 'node_modules', name);
  if (!existsSync(source)) throw new Error(`${name} is not installed in this repository: add it to devDependencies`);
  const link = join(project, 'node_modules', name);
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(source, link, 'dir');
  const { bin } = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as {
    bin?: string | Record<string, string>;
  };
  const commands = typeof bin === 'string' ? { [name.split('/').pop()!]: bin } : (bin ?? {});
  const binDir = join(project, 'node_modules', '.bin');
  mkdirSync(binDir, { recursive: true });
  for (const [command, path] of Object.entries(commands)) {
    symlinkSync(relative(binDir, join(link, path)), join(binDir, command));
  }
}

export interface CommandRun {
  code: number | null;
  output: string;
}

/**
 * Runs a command line of a guide in the project, as a shell would split it (words only: the guides' commands have no
 * quoting), with node_modules/.bin first on the PATH as `npx` and npm scripts have it, offline. Killed after
 * `timeoutMs`, so a hang fails the test. `output` is stdout and stderr together, without colours.
 */
export function runCommand(project: string, commandLine: string, timeoutMs: number): Promise<CommandRun> {
  const [command, ...args] = commandLine.trim().split(/\s+/);
  return new Promise((resolve, reject) => {
    const child = spawn(command!, args, {
      cwd: project,
      env: {
        // Without the variables of the Vitest run this test is in, which a project's own Vitest would take as its own.
        ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST'))),
        PATH: `${join(project, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
        npm_config_offline: 'true',
        NO_COLOR: '1',
        FORCE_COLOR: '0',
        CI: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}
