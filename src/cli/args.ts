/** Minimal flag parser: `--name value`, `--name=value`, `--flag`; the rest are positionals. */
export interface Args {
  positionals: string[];
  flags: Map<string, string | true>;
}

export function parseArgs(argv: string[], booleans: string[] = []): Args {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      if (eq > 0) flags.set(a.slice(2, eq), a.slice(eq + 1));
      else if (booleans.includes(a.slice(2)) || i + 1 >= argv.length) flags.set(a.slice(2), true);
      else flags.set(a.slice(2), argv[++i]);
    } else positionals.push(a);
  }
  return { positionals, flags };
}

export function flagString(args: Args, name: string): string | undefined {
  const v = args.flags.get(name);
  if (v === true) throw new Error(`--${name} needs a value`);
  return v;
}

export function flagInt(args: Args, name: string): number | null {
  const v = flagString(args, name);
  if (v === undefined) return null;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number >= 0, got ${v}`);
  return n;
}

/** Every value of a flag that may be given more than once (`--data A --data B`), in order, from raw argv. */
export function repeatedFlag(argv: string[], name: string): string[] {
  const out: string[] = [];
  argv.forEach((a, i) => {
    if (a === `--${name}`) {
      const v = argv[i + 1];
      if (v === undefined || v.startsWith("--")) throw new Error(`--${name} needs a value`);
      out.push(v);
    }
  });
  return out;
}

/** The error for a missing or unknown subcommand: it names the choices. */
export function subcommandError(command: string, sub: string | undefined, choices: string[]): Error {
  const list = `${choices.slice(0, -1).join(", ")} or ${choices[choices.length - 1]}`;
  return new Error(sub === undefined ? `${command} needs a subcommand: ${list}` : `unknown ${command} subcommand ${sub}; use ${list}`);
}
