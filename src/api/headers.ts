/** Response headers of the answering endpoints. */
export const STATE_TRUNCATED_HEADER = "x-state-truncated";
/** The identity of the model files and calibration that produced an answer (ModelInfo.hash). */
export const MODEL_HASH_HEADER = "x-model-hash";
/** Which calibration produced an answer's numbers: `default` (the model's own) or `name@hash` (one the key fitted). */
export const CALIBRATION_HEADER = "x-calibration";
