import type { Engine } from "./engine.js";
import { createBuiltinEngine } from "./builtin/builtin-engine.js";

/** Creates the engine the server runs. The built-in model is the default. */
export function createEngine(opts: { workers: number }): Engine {
  return createBuiltinEngine(opts.workers > 0 ? { workers: opts.workers } : {});
}
