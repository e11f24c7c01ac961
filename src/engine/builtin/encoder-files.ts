import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Encoder files in models/builtin/encoder/: float32, and int8 weights (dynamic quantization). */
export const ENCODER_FILES = { onnx: "encoder.onnx", int8: "encoder-int8.onnx" } as const;
export type EncoderVariant = keyof typeof ENCODER_FILES;

/** The nearest models/builtin/encoder above this file (works from src/ and dist/). */
export function encoderDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "models", "builtin", "encoder");
    if (existsSync(join(candidate, "architecture.json"))) return candidate;
    const up = dirname(dir);
    if (up === dir) throw new Error("models/builtin/encoder not found");
    dir = up;
  }
}

export function encoderPath(variant: EncoderVariant = "onnx"): string {
  return join(encoderDir(), ENCODER_FILES[variant]);
}
