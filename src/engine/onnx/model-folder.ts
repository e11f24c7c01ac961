import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Calibration } from "../engine.js";

/** How the hypothesis of a pair is written, in one language. `{name}` fills a value. */
export interface Templates {
  /** Question used when a choice has no instructions. */
  choice_question: string;
  /** Question used when a score has no instructions. */
  score_question: string;
  option: string;
  option_key_only: string;
  level: string;
  level_key_only: string;
  yes: string;
  no: string;
}

/** svc-model.json: what svc needs beside the weights (input construction and calibration are data). */
export interface SvcModelFile {
  description: string;
  languages: string[];
  /** Which entry of `templates` the engine writes hypotheses with. */
  template_language: string;
  templates: Record<string, Templates>;
  calibration: Calibration;
}

/**
 * Model files in order of preference: quantized variants first, since on a CPU they are ~4x smaller
 * and usually faster at a small cost in accuracy.
 */
export const MODEL_FILES = [
  "onnx/model_quantized.onnx",
  "onnx/model_int8.onnx",
  "onnx/model_uint8.onnx",
  "onnx/model.onnx",
  "model.onnx",
] as const;

export const SVC_MODEL_FILE = "svc-model.json";

/** Where models/onnx-defaults.json lives: the nearest models/ above this file (works from src/ and dist/). */
export function defaultsPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "models", "onnx-defaults.json");
    if (existsSync(candidate)) return candidate;
    const up = dirname(dir);
    if (up === dir) throw new Error("models/onnx-defaults.json not found");
    dir = up;
  }
}

export function readJsonFile(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(code === "ENOENT" ? `${what} is missing: ${path}` : `cannot read ${what} ${path}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`${what} ${path} is not valid JSON: ${(err as Error).message}`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function num(v: unknown, path: string, positive = false): number {
  if (typeof v !== "number" || !Number.isFinite(v) || (positive && v <= 0)) {
    throw new Error(`${path} must be a ${positive ? "positive " : ""}number`);
  }
  return v;
}

function templates(v: unknown, path: string, base: Templates | undefined): Templates {
  if (!isObject(v)) throw new Error(`${path} must be an object`);
  const out = { ...base } as Record<string, unknown>;
  for (const [k, s] of Object.entries(v)) {
    if (typeof s !== "string") throw new Error(`${path}.${k} must be a string`);
    out[k] = s;
  }
  const keys: (keyof Templates)[] = ["choice_question", "score_question", "option", "option_key_only", "level", "level_key_only", "yes", "no"];
  for (const k of keys) if (typeof out[k] !== "string") throw new Error(`${path}.${k} is missing`);
  return out as unknown as Templates;
}

/**
 * svc-model.json over the defaults: each field it gives replaces the default one (a template set of
 * a language the defaults also have is completed from them). Throws with the file and field on bad input.
 */
export function parseSvcModel(value: unknown, defaults: SvcModelFile | null, file: string): SvcModelFile {
  try {
    if (!isObject(value)) throw new Error("must be a JSON object");
    const d = defaults;
    const description = value.description ?? d?.description ?? "";
    if (typeof description !== "string") throw new Error("description must be a string");
    const languages = value.languages ?? d?.languages;
    if (!Array.isArray(languages) || languages.length === 0 || !languages.every((l) => typeof l === "string")) {
      throw new Error("languages must be a non-empty list of strings");
    }
    const rawTemplates = value.templates ?? d?.templates;
    if (!isObject(rawTemplates)) throw new Error("templates must be an object of language -> templates");
    const all: Record<string, Templates> = {};
    for (const [lang, t] of Object.entries(rawTemplates)) all[lang] = templates(t, `templates.${lang}`, d?.templates[lang]);
    const language = value.template_language ?? d?.template_language ?? Object.keys(all)[0];
    if (typeof language !== "string" || !all[language]) throw new Error(`template_language ${JSON.stringify(language)} has no entry in templates`);
    const c = value.calibration ?? d?.calibration;
    if (!isObject(c)) throw new Error("calibration must be an object");
    const dc = d?.calibration;
    const sub = (name: "choice" | "score" | "noul"): Record<string, unknown> => {
      const s = c[name] ?? dc?.[name];
      if (!isObject(s)) throw new Error(`calibration.${name} must be an object`);
      return { ...dc?.[name], ...s };
    };
    const calibration: Calibration = {
      choice: { temperature: num(sub("choice").temperature, "calibration.choice.temperature", true) },
      score: { temperature: num(sub("score").temperature, "calibration.score.temperature", true) },
      noul: { a: num(sub("noul").a, "calibration.noul.a"), b: num(sub("noul").b, "calibration.noul.b") },
      default_min_confidence: num(c.default_min_confidence ?? dc?.default_min_confidence, "calibration.default_min_confidence"),
    };
    return { description, languages: languages as string[], template_language: language, templates: all, calibration };
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`);
  }
}

let cachedDefaults: SvcModelFile | null = null;

export function svcModelDefaults(): SvcModelFile {
  if (!cachedDefaults) {
    const path = defaultsPath();
    cachedDefaults = parseSvcModel(readJsonFile(path, "svc-model defaults"), null, path);
  }
  return cachedDefaults;
}

/** The folder's svc-model.json completed from the defaults, or the defaults when it has none. */
export function readSvcModel(dir: string): SvcModelFile {
  const path = join(dir, SVC_MODEL_FILE);
  if (!existsSync(path)) return svcModelDefaults();
  return parseSvcModel(readJsonFile(path, SVC_MODEL_FILE), svcModelDefaults(), path);
}

/** Output positions of the NLI labels in config.json's id2label. */
export interface NliLabels {
  count: number;
  entailment: number;
  /** Contradiction, or for two-label models not_entailment. */
  contradiction: number;
  neutral: number | null;
}

export function readLabels(dir: string): { labels: NliLabels; padTokenId: number | null } {
  const path = join(dir, "config.json");
  const config = readJsonFile(path, "config.json");
  if (!isObject(config) || !isObject(config.id2label)) throw new Error(`${path} has no id2label`);
  let entailment = -1;
  let contradiction = -1;
  let notEntailment = -1;
  let neutral: number | null = null;
  const entries = Object.entries(config.id2label);
  for (const [id, label] of entries) {
    const i = Number(id);
    if (!Number.isInteger(i) || i < 0 || typeof label !== "string") throw new Error(`${path}: id2label has a bad entry ${id}`);
    const l = label.toLowerCase().replace(/[\s-]+/g, "_");
    if (l.startsWith("entail")) entailment = i;
    else if (l.startsWith("contradict")) contradiction = i;
    else if (l === "not_entailment" || l === "non_entailment") notEntailment = i;
    else if (l === "neutral") neutral = i;
  }
  if (contradiction < 0) contradiction = notEntailment;
  if (entailment < 0 || contradiction < 0) {
    const names = entries.map(([, l]) => String(l)).join(", ");
    throw new Error(`${path}: id2label (${names}) needs an entailment and a contradiction (or not_entailment) label; is this an NLI model?`);
  }
  const pad = typeof config.pad_token_id === "number" ? config.pad_token_id : null;
  return { labels: { count: entries.length, entailment, contradiction, neutral }, padTokenId: pad };
}

/** The ONNX file to load: `file` when given (relative to the folder), else the first of MODEL_FILES present. */
export function findModelFile(dir: string, file?: string): string {
  if (file) {
    const path = join(dir, file);
    if (!existsSync(path)) throw new Error(`ONNX file ${file} (SVC_ONNX_FILE) not found in ${dir}`);
    return file;
  }
  for (const f of MODEL_FILES) if (existsSync(join(dir, f))) return f;
  throw new Error(`no ONNX model in ${dir}: expected one of ${MODEL_FILES.join(", ")}`);
}

export function checkFolder(dir: string): void {
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    throw new Error(`model folder ${dir} does not exist`);
  }
  if (!isDir) throw new Error(`model folder ${dir} is not a directory`);
}
