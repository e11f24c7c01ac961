import type { Engine } from "./engine.js";
import { createDeciderEngine } from "./decider/decider-engine.js";
import { createOnnxEngine } from "./onnx/onnx-engine.js";
import { loadConfig } from "../config.js";
import { readActive, resolveChoice, type ModelChoice } from "../models/store.js";

export interface EngineOptions {
  /** Inference threads (builtin: worker threads; onnx: intra-op threads); 0 = the engine's default. */
  workers: number;
  /** "builtin", an installed model name or a model folder; default: SVC_MODEL, else active.json, else builtin. */
  model?: string | null;
  /** Data dir holding models/ (default: SVC_DATA_DIR via loadConfig). */
  dataDir?: string;
  env?: NodeJS.ProcessEnv;
}

/** Which model the options select, and from where (for messages such as `svc models list`). */
export function selectModel(opts: Omit<EngineOptions, "workers">): { choice: ModelChoice; from: "option" | "SVC_MODEL" | "active.json" | "default" } {
  const env = opts.env ?? process.env;
  const dataDir = opts.dataDir ?? loadConfig(env).dataDir;
  if (opts.model) return { choice: resolveChoice(dataDir, opts.model), from: "option" };
  if (env.SVC_MODEL) return { choice: resolveChoice(dataDir, env.SVC_MODEL), from: "SVC_MODEL" };
  const active = readActive(dataDir);
  if (active) return { choice: resolveChoice(dataDir, active), from: "active.json" };
  return { choice: { kind: "builtin" }, from: "default" };
}

/** Creates the engine the server runs. The built-in model is the default. */
export function createEngine(opts: EngineOptions): Engine {
  const { choice } = selectModel(opts);
  if (choice.kind === "onnx") {
    const env = opts.env ?? process.env;
    return createOnnxEngine(choice.dir, { threads: opts.workers > 0 ? opts.workers : undefined, file: env.SVC_ONNX_FILE || undefined });
  }
  return createDeciderEngine(opts.workers > 0 ? { threads: opts.workers } : {});
}
