import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { printable } from './printable.js';
import { editDistance } from './edit-distance.js';

/** A bad command line, found by a command's own checks: printed as `Error: <message>`, exit status 2. */
export class InvalidArgument extends Error {}

/** What a command reads from its command line: its options, and the sub-commands it takes first, if any. */
export interface CommandLineSpec<O extends ParseArgsOptionsConfig> {
  /** Its options; every command also takes `-h` and `--help`. */
  readonly options: O;
  /** The words it takes as its first argument (`failed`, `replay`); none when it takes options only. */
  readonly actions?: readonly string[];
  /** The option a URL given without its option's name belongs to, named in the hint of the error. */
  readonly urlOption?: string;
}

type CommandLineValues<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>
>['values'];

export interface CommandLine<O extends ParseArgsOptionsConfig, A extends string | undefined> {
  readonly values: CommandLineValues<O>;
  /** The first argument, one of `actions`; `undefined` when the command takes none. */
  readonly action: A;
}

const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

/**
 * Reads a command line as `node:util`'s `parseArgs()` does, with messages of its own: an argument that is not an option
 * may be a secret put where an option's name was forgotten (`simulate <url?token=…>`, `queue failed redis://:pw@…`),
 * so it is never shown, only its place (`argument #2`); an option's name is shown escaped, never its value.
 * `'help'` when `-h` or `--help` is among valid options, whatever else is missing.
 */
export function readCommandLine<O extends ParseArgsOptionsConfig, A extends string>(
  args: string[],
  spec: CommandLineSpec<O> & { readonly actions: readonly A[] },
): CommandLine<O, A> | 'help';
export function readCommandLine<O extends ParseArgsOptionsConfig>(
  args: string[],
  spec: CommandLineSpec<O>,
): CommandLine<O, undefined> | 'help';
export function readCommandLine<O extends ParseArgsOptionsConfig>(
  args: string[],
  spec: CommandLineSpec<O>,
): CommandLine<O, string | undefined> | 'help' {
  const options = { ...spec.options, ...HELP_OPTION };
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  const positionals: { index: number; value: string }[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token);
    else if (token.kind === 'option') checkOption(token, options);
  }
  if (tokens.some((token) => token.kind === 'option' && token.name === 'help')) return 'help';
  const action = spec.actions === undefined ? undefined : readAction(positionals[0], spec.actions);
  const unexpected = positionals[spec.actions === undefined ? 0 : 1];
  if (unexpected !== undefined) {
    const hint =
      spec.urlOption !== undefined && URL.canParse(unexpected.value)
        ? `; it looks like a URL: give it with ${spec.urlOption}`
        : '';
    throw new InvalidArgument(`unexpected argument #${unexpected.index + 1} (${HIDDEN})${hint}`);
  }
  // Every refusal of the strict reading has been made above, in these words.
  const { values } = parseArgs({ args, options: spec.options, strict: true, allowPositionals: true });
  return { values, action };
}

const HIDDEN = 'not shown: it may be a secret';

interface OptionToken {
  name: string;
  rawName: string;
  value?: string | undefined;
  inlineValue?: boolean | undefined;
}

function checkOption({ name, rawName, value, inlineValue }: OptionToken, options: ParseArgsOptionsConfig): void {
  const option = Object.hasOwn(options, name) ? options[name] : undefined;
  if (option === undefined) {
    const known = Object.keys(options).map((key) => `--${key}`);
    const close = closestWord(rawName, known);
    throw new InvalidArgument(`unknown option ${printable(rawName)}${close ? `; did you mean ${close}?` : ''}`);
  }
  if (option.type === 'boolean') {
    if (value !== undefined) throw new InvalidArgument(`${rawName} takes no value`);
    return;
  }
  if (value === undefined) throw new InvalidArgument(`${rawName} needs a value`);
  if (!inlineValue && value.startsWith('-')) {
    throw new InvalidArgument(`${rawName} needs a value (give one that starts with "-" as ${rawName}=<value>)`);
  }
}

/** Sub-commands are matched exactly; a close miss is named as a suggestion, the argument itself never shown. */
function readAction(first: { index: number; value: string } | undefined, actions: readonly string[]): string {
  const expected = `${actions.slice(0, -1).join(', ')} or ${actions.at(-1)}`;
  if (first === undefined) throw new InvalidArgument(`a command is required: ${expected}`);
  if (actions.includes(first.value)) return first.value;
  const close = closestWord(first.value, actions);
  const hint = close === undefined ? `expected ${expected}` : `did you mean ${close}?`;
  throw new InvalidArgument(`unknown command at argument #${first.index + 1} (${HIDDEN}); ${hint}`);
}

/** The one known word within two edits of `given`, for a "did you mean"; `undefined` when none is, or several. */
export function closestWord(given: string, known: readonly string[]): string | undefined {
  // Only "close or not" matters: lengths more than two apart, or a long input (a pasted secret?), are never close.
  const typed = given.toLowerCase();
  if (typed.length > 64) return undefined;
  const close = known.filter((word) => Math.abs(typed.length - word.length) <= 2 && editDistance(typed, word) <= 2);
  return close.length === 1 ? close[0] : undefined;
}
