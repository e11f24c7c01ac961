import type { Worker } from "node:worker_threads";

/**
 * Batches a worker thread is running. onnxruntime aborts the whole process when the thread is
 * terminated inside a run (seen at shutdown with a request still in the model), so a worker is
 * terminated only once its batches have come back.
 */
export class WorkerBatches {
  private running = 0;
  private waiters: (() => void)[] = [];

  started(): void {
    this.running++;
  }

  ended(): void {
    if (this.running > 0) this.running--;
    if (this.running === 0) for (const wake of this.waiters.splice(0)) wake();
  }

  /** The worker is gone: nothing it ran will come back. */
  reset(): void {
    this.running = 1;
    this.ended();
  }

  /** Terminates the worker once no batch runs (at most `waitMs` later: a hung run must not hold shutdown forever). */
  async terminate(worker: Worker, waitMs = 10_000): Promise<void> {
    if (this.running > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        timer = setTimeout(resolve, waitMs);
      });
      clearTimeout(timer);
    }
    await worker.terminate();
  }
}
