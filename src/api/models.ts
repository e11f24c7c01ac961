import type { ModelInfo } from "../engine/engine.js";

/** The names a client may send as its own, and the versioned name each answers as. */
export const CURRENT_VERSION = "svc-1.6.0";
export const PUBLIC_MODELS = ["svc-latest", "svc-preview", CURRENT_VERSION] as const;
export const RELEASE_DATE = "2026-11-28";

const ALIAS_FAMILIES = ["alt", "jev"];

/**
 * Resolves a requested model name to the versioned model that answers, or null (404).
 * svc-latest, svc-1.6.0 and the alt/jev aliases answer as svc-1.6.0; svc-preview and its aliases as
 * svc-preview (no preview model exists yet, so the current model serves it under that name).
 */
export function resolveModel(name: string): string | null {
  if (name === "svc-latest" || name === CURRENT_VERSION) return CURRENT_VERSION;
  if (name === "svc-preview") return "svc-preview";
  for (const family of ALIAS_FAMILIES) {
    if (name === `${family}-latest`) return CURRENT_VERSION;
    if (name === `${family}-preview`) return "svc-preview";
    if (new RegExp(`^${family}-1\\.\\d+\\.\\d+$`).test(name)) return CURRENT_VERSION;
  }
  return null;
}

export interface ModelEntry {
  name: string;
  description: string;
  release_date: string;
  resolves_to: string;
  aliases: string[];
  backend: string;
  languages: string[];
  max_tokens_per_pair: number;
  default_min_confidence: number;
  /** The identity of the model files and calibration that answer (the x-model-hash of every answer). */
  hash: string;
}

export function listModels(info: ModelInfo, defaultMinConfidence: number): { models: ModelEntry[] } {
  const common = {
    release_date: RELEASE_DATE,
    backend: info.backend,
    languages: info.languages,
    max_tokens_per_pair: info.maxPairTokens,
    default_min_confidence: defaultMinConfidence,
    hash: info.hash,
  };
  return {
    models: [
      {
        name: "svc-latest",
        description: `The current model (${CURRENT_VERSION}). ${info.description}`,
        resolves_to: CURRENT_VERSION,
        aliases: ["alt-latest", "jev-latest", "alt-1.x.y", "jev-1.x.y"],
        ...common,
      },
      {
        name: "svc-preview",
        description: `Preview channel; currently served by the same model as ${CURRENT_VERSION}. ${info.description}`,
        resolves_to: "svc-preview",
        aliases: ["alt-preview", "jev-preview"],
        ...common,
      },
      {
        name: CURRENT_VERSION,
        description: `Model version 1.2. ${info.description}`,
        resolves_to: CURRENT_VERSION,
        aliases: [],
        ...common,
      },
    ],
  };
}
