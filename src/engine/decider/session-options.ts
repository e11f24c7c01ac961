import type ort from "onnxruntime-node";

/**
 * onnxruntime session options of the decision model's graphs, as the worker runs them (bench:scorer runs the scorer
 * with the same). Idle intra-op threads sleep instead of spinning: a 12-layer run keeps both cores busy for
 * seconds, and spinning threads starved the event loop (a /healthz took 260-460 ms during a 64-question request).
 */
export function sessionOptions(threads: number): ort.InferenceSession.SessionOptions {
  return {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
    extra: { session: { intra_op: { allow_spinning: "0" } } },
  };
}
