import type { Problem } from "../http/errors.js";
import type { Option } from "./question.js";
import { renderText } from "./render.js";

/**
 * Field readers shared by both wire parsers. Each reads one value at `loc`, pushes every problem it
 * finds into `problems`, and returns the internal value (or a placeholder when invalid; the caller
 * refuses the request whenever problems is non-empty).
 */
export type Loc = (string | number)[];

export const LIMITS = {
  maxQuestions: 64,
  minOptions: 2,
  maxOptions: 255,
  minLevels: 2,
  maxLevels: 10,
  maxInstructionChars: 8000,
  /** Objects and arrays inside a text field (state, instructions, descriptions) may nest this deep. */
  maxTextDepth: 64,
} as const;

/** Objects that are not text: the service reads text only. */
const NON_TEXT_PARTS = new Set(["image", "image_url", "input_image", "file", "input_file", "asset", "box"]);

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** True when a JSON value carries an image, file, asset or Box part anywhere inside it. */
export function hasNonTextPart(value: unknown, depth = 0): boolean {
  if (depth > 64 || value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some((v) => hasNonTextPart(v, depth + 1));
  const type = (value as Record<string, unknown>).type;
  if (typeof type === "string" && NON_TEXT_PARTS.has(type.toLowerCase())) return true;
  return Object.values(value).some((v) => hasNonTextPart(v, depth + 1));
}

/**
 * True when objects/arrays nest deeper than `max` (`[]` is depth 1). Iterative: the JSON parser
 * accepts ~30,000 levels within 64 KiB, which would overflow the stack of a recursive walk and make
 * rendered text quadratic in the depth (indentation per level).
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** A text-like value (string, object or array; null allowed when `nullable`), rendered to text. */
export function readText(
  value: unknown,
  loc: Loc,
  problems: Problem[],
  opts: { nullable: boolean; maxChars?: number },
): string | null {
  if (value === undefined || value === null) {
    if (!opts.nullable) problems.push({ loc, code: "missing", type: "missing" });
    return null;
  }
  if (typeof value !== "string" && typeof value !== "object") {
    problems.push({
      loc,
      code: opts.nullable ? "text_or_null_type" : "text_value_type",
      type: opts.nullable ? "text_type" : "text_type",
    });
    return null;
  }
  if (typeof value === "object" && nestedDeeperThan(value, LIMITS.maxTextDepth)) {
    problems.push({ loc, code: "text_too_deep", type: "too_deep", params: { max: LIMITS.maxTextDepth } });
    return null;
  }
  if (hasNonTextPart(value)) {
    problems.push({ loc, code: "text_only", type: "text_only" });
    return null;
  }
  const text = renderText(value);
  if (opts.maxChars !== undefined && text.length > opts.maxChars) {
    problems.push({
      loc,
      code: "instructions_too_long",
      type: "string_too_long",
      params: { max: opts.maxChars, n: text.length },
    });
  }
  return text;
}

/** A description: string, object/array (read as text) or null. */
function readDescription(value: unknown, loc: Loc, problems: Problem[]): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (typeof value === "object") return readText(value, loc, problems, { nullable: true });
  problems.push({ loc, code: "string_or_null", type: "string_type" });
  return null;
}

function countProblem(loc: Loc, kind: "choice" | "score", n: number): Problem {
  return kind === "choice"
    ? { loc, code: "choice_options", type: "value_error", params: { n } }
    : { loc, code: "score_levels", type: "value_error", params: { n } };
}

/** Choice options: {key: description|null} or [keys]. */
export function readChoiceOptions(value: unknown, loc: Loc, problems: Problem[]): Option[] {
  if (value === undefined || value === null) {
    problems.push({ loc, code: "missing", type: "missing" });
    return [];
  }
  const options: Option[] = [];
  if (Array.isArray(value)) {
    const seen = new Set<string>();
    value.forEach((key, i) => {
      if (typeof key !== "string") {
        problems.push({ loc: [...loc, i], code: "string_type", type: "string_type" });
        return;
      }
      if (seen.has(key)) {
        problems.push({ loc: [...loc, i], code: "duplicate_option", type: "value_error", params: { key } });
        return;
      }
      seen.add(key);
      options.push({ key, description: null });
    });
    if (value.length < LIMITS.minOptions || value.length > LIMITS.maxOptions) {
      problems.push(countProblem(loc, "choice", value.length));
    }
    return options;
  }
  if (!isPlainObject(value)) {
    problems.push({ loc, code: "choice_shape", type: "dict_type" });
    return [];
  }
  for (const [key, description] of Object.entries(value)) {
    options.push({ key, description: readDescription(description, [...loc, key], problems) });
  }
  if (options.length < LIMITS.minOptions || options.length > LIMITS.maxOptions) {
    problems.push(countProblem(loc, "choice", options.length));
  }
  return options;
}

/** Score levels: [descriptions] or {"0": ..., "n-1": ...}; read as the list in index order. */
export function readScoreLevels(value: unknown, loc: Loc, problems: Problem[]): Option[] {
  if (value === undefined || value === null) {
    problems.push({ loc, code: "missing", type: "missing" });
    return [];
  }
  let list: unknown[];
  if (Array.isArray(value)) {
    list = value;
  } else if (isPlainObject(value)) {
    const keys = Object.keys(value);
    const expected = keys.map((_, i) => String(i));
    if (!expected.every((k) => Object.prototype.hasOwnProperty.call(value, k))) {
      problems.push({ loc, code: "score_shape", type: "value_error", params: { last: Math.max(keys.length - 1, 1) } });
      return [];
    }
    list = expected.map((k) => value[k]);
  } else {
    problems.push({ loc, code: "score_shape", type: "list_type", params: { last: "n-1" } });
    return [];
  }
  const levels = list.map((d, i) => {
    // A level is what the answer's legend names: null would leave it nameless (the official clients refuse a null legend value).
    if (d === null || d === undefined) problems.push({ loc: [...loc, i], code: "level_null", type: "string_type" });
    return { key: String(i), description: readDescription(d, [...loc, i], problems), sent: d };
  });
  if (levels.length < LIMITS.minLevels || levels.length > LIMITS.maxLevels) {
    problems.push(countProblem(loc, "score", levels.length));
  }
  return levels;
}

/** Yes/no descriptions: an object with optional `true` and `false` (or the given names), read as text. */
export function readYesNo(
  value: unknown,
  loc: Loc,
  problems: Problem[],
  names: { yes: string; no: string },
): { yes: string | null; no: string | null } {
  if (value === undefined || value === null) return { yes: null, no: null };
  if (!isPlainObject(value)) {
    problems.push({ loc, code: "dict_type", type: "dict_type" });
    return { yes: null, no: null };
  }
  for (const key of Object.keys(value)) {
    if (key !== names.yes && key !== names.no) {
      problems.push({ loc: [...loc, key], code: "noul_extra_key", type: "extra_forbidden", params: { key } });
    }
  }
  return {
    yes: readText(value[names.yes], [...loc, names.yes], problems, { nullable: true }),
    no: readText(value[names.no], [...loc, names.no], problems, { nullable: true }),
  };
}

/** The questions map: an object, 1..64 entries, non-empty keys. Returns its entries. */
export function readQuestionMap(value: unknown, loc: Loc, problems: Problem[]): [string, unknown][] {
  if (value === undefined || value === null) {
    problems.push({ loc, code: "missing", type: "missing" });
    return [];
  }
  if (!isPlainObject(value)) {
    problems.push({ loc, code: "dict_type", type: "dict_type" });
    return [];
  }
  const entries = Object.entries(value);
  if (entries.length === 0) problems.push({ loc, code: "no_questions", type: "too_short" });
  if (entries.length > LIMITS.maxQuestions) {
    problems.push({ loc, code: "too_many_questions", type: "too_long", params: { max: LIMITS.maxQuestions, n: entries.length } });
  }
  for (const [key] of entries) {
    if (key.trim() === "") problems.push({ loc: [...loc, key], code: "empty_key", type: "value_error" });
  }
  return entries;
}

/** The `model` field: a string (resolution to a served model happens after validation). */
export function readModelName(value: unknown, loc: Loc, problems: Problem[]): string {
  if (value === undefined || value === null) {
    problems.push({ loc, code: "missing", type: "missing" });
    return "";
  }
  if (typeof value !== "string") {
    problems.push({ loc, code: "string_type", type: "string_type" });
    return "";
  }
  return value;
}

const NON_TEXT_QUESTION_TYPES = ["box", "image", "asset", "file"];

/**
 * The head of one question: an object with a `type` among `allowed`. Box/image/asset/file types get the
 * text-only problem. Returns the question's fields and type, or null when it cannot be read further.
 */
export function readQuestionHead<T extends string>(
  value: unknown,
  loc: Loc,
  problems: Problem[],
  allowed: readonly T[],
): { fields: Record<string, unknown>; type: T } | null {
  if (!isPlainObject(value)) {
    problems.push({ loc, code: "dict_type", type: "dict_type" });
    return null;
  }
  const type = value.type;
  if (type === undefined || type === null) {
    problems.push({ loc: [...loc, "type"], code: "missing", type: "missing" });
    return null;
  }
  if (typeof type === "string" && NON_TEXT_QUESTION_TYPES.includes(type.toLowerCase())) {
    problems.push({ loc: [...loc, "type"], code: "text_only", type: "text_only" });
    return null;
  }
  if (typeof type !== "string" || !(allowed as readonly string[]).includes(type)) {
    const names = allowed.map((a) => `'${a}'`);
    problems.push({
      loc: [...loc, "type"],
      code: "question_type",
      type: "literal_error",
      params: { allowed: `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}` },
    });
    return null;
  }
  return { fields: value, type: type as T };
}
