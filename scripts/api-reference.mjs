// Writes the API reference (one Markdown page per entry point of package.json, and an index) from the type
// declarations that `npm run build` leaves in dist/: each export with its documentation comment and its declaration.
// TypeDoc would need a TypeScript 5 or 6 compiler, and this package is built with TypeScript 7; the declarations are
// what a user's editor reads, so the reference says the same. Usage: node scripts/api-reference.mjs [output folder]
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseAst } from 'rolldown/parseAst';

const root = join(import.meta.dirname, '..');
const output = resolve(process.argv[2] ?? join(root, 'docs', 'api'));
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** Each entry point a user imports, with the declaration file its `types` condition names. */
const entryPoints = Object.entries(manifest.exports)
  .filter(([subpath]) => subpath !== './package.json')
  .map(([subpath, conditions]) => ({
    specifier: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
    page: subpath === '.' ? `${manifest.name}.md` : `${subpath.slice(2)}.md`,
    file: join(root, conditions.types),
  }));

const parsed = new Map();
/** A declaration file's text and top-level statements, read once. */
function parse(file) {
  if (!parsed.has(file)) {
    if (!existsSync(file)) throw new Error(`${relative(root, file)} is missing: run npm run build first`);
    const text = readFileSync(file, 'utf8');
    parsed.set(file, { text, body: parseAst(text, { lang: 'dts' }, file).body });
  }
  return parsed.get(file);
}

const target = (from, source) => join(dirname(from), source.replace(/\.js$/, '.d.ts'));

/** The names a statement declares at the top level of its file. */
function declaredNames(statement) {
  const declaration = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
  if (!declaration) return [];
  if (declaration.type === 'VariableDeclaration') return declaration.declarations.map((part) => part.id.name);
  return declaration.id?.name === undefined ? [] : [declaration.id.name];
}

/** The declarations of `name` in `file` (several for an overloaded function), following imports and re-exports. */
function resolveName(file, name) {
  const { body } = parse(file);
  const found = body.filter((statement) => declaredNames(statement).includes(name));
  if (found.length > 0) return found.map((statement) => ({ file, statement }));
  for (const statement of body) {
    const specifiers = ['ImportDeclaration', 'ExportNamedDeclaration'].includes(statement.type)
      ? statement.specifiers
      : [];
    for (const specifier of specifiers ?? []) {
      const local = specifier.local?.name;
      const exposed = statement.type === 'ImportDeclaration' ? local : specifier.exported.name;
      if (exposed !== name) continue;
      if (statement.source) {
        const imported = statement.type === 'ImportDeclaration' ? specifier.imported?.name : local;
        return resolveName(target(file, statement.source.value), imported ?? name);
      }
      if (local !== name) return resolveName(file, local);
    }
  }
  for (const statement of body) {
    if (statement.type !== 'ExportAllDeclaration' || statement.exported) continue;
    const from = target(file, statement.source.value);
    if (exportedNames(from).includes(name)) return resolveName(from, name);
  }
  throw new Error(`${name} is not declared in ${relative(root, file)}`);
}

/** The names a declaration file exports, in the order it exports them. */
function exportedNames(file) {
  return parse(file).body.flatMap((statement) => {
    if (statement.type === 'ExportAllDeclaration') return exportedNames(target(file, statement.source.value));
    if (statement.type !== 'ExportNamedDeclaration') return [];
    if (statement.declaration) return declaredNames(statement);
    return statement.specifiers.map((specifier) => specifier.exported.name);
  });
}

/** The documentation comment right before `start`, as its text without the comment's markers. */
function commentBefore(text, start) {
  const before = text.slice(0, start).trimEnd();
  if (!before.endsWith('*/')) return '';
  const open = before.lastIndexOf('/**');
  if (open < 0) return '';
  return before
    .slice(open + 3, -2)
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, '').trimEnd())
    .join('\n')
    .trim();
}

const KINDS = {
  ClassDeclaration: 'class',
  TSInterfaceDeclaration: 'interface',
  TSTypeAliasDeclaration: 'type',
  FunctionDeclaration: 'function',
  TSDeclareFunction: 'function',
  VariableDeclaration: 'constant',
  TSEnumDeclaration: 'enum',
  TSModuleDeclaration: 'namespace',
};

/**
 * A declaration as a reader wants it: without `export declare`, private members (and the comments that document
 * them), or tsc's four-space indent.
 */
function declarationText(text, statement) {
  const declaration = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
  return withoutPrivateMembers(
    text
      .slice(declaration.start, declaration.end)
      .replace(/^declare /, '')
      .split('\n'),
  )
    .map((line) => line.replace(/^( {4})+/, (indent) => ' '.repeat(indent.length / 2)))
    .join('\n');
}

/** The lines but a private member's (tsc writes it as `private name;` or `#private;`) and its comment's. */
function withoutPrivateMembers(lines) {
  const kept = [];
  let comment = [];
  for (const line of lines) {
    const inComment = comment.length > 0 && !comment.at(-1).trimEnd().endsWith('*/');
    if (inComment || /^\s*\/\*\*/.test(line)) {
      comment.push(line);
      continue;
    }
    if (!/^\s*(#private;|private [^;]*;)$/.test(line)) kept.push(...comment, line);
    comment = [];
  }
  return [...kept, ...comment];
}

function describeExport(entryFile, name) {
  const declarations = resolveName(entryFile, name);
  const first = declarations[0];
  const { text } = parse(first.file);
  const declaration = first.statement.type === 'ExportNamedDeclaration' ? first.statement.declaration : first.statement;
  const comment = declarations
    .map(({ file, statement }) => commentBefore(parse(file).text, statement.start))
    .find((found) => found !== '');
  return {
    name,
    kind: KINDS[declaration.type] ?? 'declaration',
    comment: comment ?? '',
    code: declarations.map(({ file, statement }) => declarationText(parse(file).text, statement)).join('\n'),
    source: relative(join(root, 'dist'), first.file).replace(/\.d\.ts$/, '.ts'),
    text,
  };
}

const NOTICE =
  '<!-- Generated by `npm run docs:api` from the type declarations of the built package: do not edit by hand. -->';

function entryPage({ specifier }, exports) {
  const lines = [NOTICE, '', `# \`${specifier}\``, '', `[API reference](README.md): every export of \`${specifier}\`.`];
  lines.push('', '| Export | Kind |', '|---|---|');
  for (const { name, kind } of exports) lines.push(`| [\`${name}\`](#${name.toLowerCase()}) | ${kind} |`);
  for (const { name, kind, comment, code, source } of exports) {
    lines.push('', `## ${name}`, '', `${kind} · \`lib/${source}\``);
    if (comment) lines.push('', comment);
    lines.push('', '```ts', code, '```');
  }
  return `${lines.join('\n')}\n`;
}

function indexPage(pages) {
  const lines = [
    NOTICE,
    '',
    '# API reference',
    '',
    'Every export of each entry point, with its documentation and its declaration. The guides show how to use them:',
    'start from the [README](../../README.md#guides).',
    '',
    '| Entry point | Exports |',
    '|---|---|',
  ];
  for (const { entry, exports } of pages) {
    lines.push(`| [\`${entry.specifier}\`](${entry.page}) | ${exports.length} |`);
  }
  return `${lines.join('\n')}\n`;
}

const pages = entryPoints.map((entry) => ({
  entry,
  exports: [...new Set(exportedNames(entry.file))].map((name) => describeExport(entry.file, name)),
}));
rmSync(output, { recursive: true, force: true });
mkdirSync(output, { recursive: true });
writeFileSync(join(output, 'README.md'), indexPage(pages));
for (const { entry, exports } of pages) writeFileSync(join(output, entry.page), entryPage(entry, exports));
console.log(`API reference of ${pages.length} entry points written to ${relative(root, output) || '.'}`);
