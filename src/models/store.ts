import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { basename, isAbsolute, join, resolve } from "node:path";

/**
 * Installed models live under <data dir>/models/<name>/ in the Hugging Face folder layout, each with
 * a manifest.json saying where it came from; <data dir>/models/active.json names the one `svc serve` uses.
 */
export interface ManifestFile {
  path: string;
  sha256: string;
  size: number;
  /** "hub" when downloaded; "svc-default" for a svc-model.json written from models/onnx-defaults.json. */
  source: "hub" | "svc-default";
}

export interface Manifest {
  hub_id: string;
  /** The commit sha the files were pinned to (or the requested revision when the hub API gave none). */
  revision: string;
  requested_revision: string;
  endpoint: string;
  files: ManifestFile[];
  pulled_at: string;
}

export interface InstalledModel {
  name: string;
  dir: string;
  manifest: Manifest | null;
  /** Bytes on disk under the folder. */
  size: number;
}

/** What a model selector (SVC_MODEL, active.json, `svc models use`) points at. */
export type ModelChoice = { kind: "builtin" } | { kind: "onnx"; dir: string; name: string };

export const ACTIVE_FILE = "active.json";

export function modelsDir(dataDir: string): string {
  return join(dataDir, "models");
}

/** "MoritzLaurer/multilingual-MiniLMv2-L6-mnli-xnli" -> "MoritzLaurer--multilingual-MiniLMv2-L6-mnli-xnli". */
export function modelNameFor(hubId: string): string {
  return hubId.replace(/\//g, "--");
}

/** Hub ids are "name" or "owner/name" of letters, digits, '-', '_' and '.'; anything else could escape the folder. */
export function checkHubId(hubId: string): void {
  if (!/^[A-Za-z0-9][\w.-]*(\/[A-Za-z0-9][\w.-]*)?$/.test(hubId) || hubId.includes("..")) {
    throw new Error(`not a Hugging Face model id: ${JSON.stringify(hubId)} (expected owner/name)`);
  }
}

function sizeOf(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const e of readdirSync(path)) total += sizeOf(join(path, e));
  return total;
}

export function readManifest(dir: string): Manifest | null {
  try {
    return JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Manifest;
  } catch {
    return null;
  }
}

/** Installed model folders (dot-folders hold downloads in progress and are skipped). */
export function listInstalled(dataDir: string): InstalledModel[] {
  const root = modelsDir(dataDir);
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .map((e) => {
      const dir = join(root, e.name);
      return { name: e.name, dir, manifest: readManifest(dir), size: sizeOf(dir) };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The selector recorded by `svc models use`, or null when none (the built-in model is the default). */
export function readActive(dataDir: string): string | null {
  const path = join(modelsDir(dataDir), ACTIVE_FILE);
  if (!existsSync(path)) return null;
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`${path} is not valid JSON: ${(err as Error).message}`);
  }
  const model = (value as { model?: unknown } | null)?.model;
  if (typeof model !== "string" || model === "") throw new Error(`${path} has no "model" string`);
  return model;
}

/** Records the active model; null returns to the built-in default. Written via a rename so readers never see half a file. */
export function writeActive(dataDir: string, model: string | null): void {
  const root = modelsDir(dataDir);
  const path = join(root, ACTIVE_FILE);
  if (model === null) {
    rmSync(path, { force: true });
    return;
  }
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ model, set_at: new Date().toISOString() }, null, 2)}\n`);
  renameSync(tmp, path);
}

function looksLikePath(s: string): boolean {
  return isAbsolute(s) || s.startsWith(".") || s.includes("/") || s.includes("\\");
}

/**
 * Resolves "builtin", an installed model's name, or a folder path. A name that is not installed still
 * resolves (to where it would be), so that loading it fails with the path it looked at.
 */
export function resolveChoice(dataDir: string, selector: string): ModelChoice {
  if (selector === "builtin") return { kind: "builtin" };
  const name = modelNameFor(selector);
  const installed: ModelChoice = { kind: "onnx", dir: join(modelsDir(dataDir), name), name };
  if (!looksLikePath(selector)) return installed;
  const dir = resolve(selector);
  // "owner/name" reads like a relative path; when no such folder exists it means the pulled hub model.
  if (!existsSync(dir) && /^[\w.-]+\/[\w.-]+$/.test(selector) && existsSync(installed.dir)) return installed;
  return { kind: "onnx", dir, name: basename(dir) };
}
