/**
 * How the decider worker batches a job's texts for the encoder. Every encoder run has a fixed cost (the weights
 * read once more, a few hundred operator calls): on 2 cores about as much as 15 token slots, one slot being one
 * token of one row, padding included. So texts of nearby lengths run together, padded to the longest of them,
 * wherever the padding costs less than another run would. A text's states do not depend on its run: masked
 * padding adds exact zeros to the attention's sums and products, and every other step (the integer products
 * included) reads one token at a time (test/decider-engine.test.ts checks a text read alone against the same text
 * inside a larger run, bit for bit).
 */

/** Token slots (rows x padded length) of one encoder run at most. */
export const BATCH_TOKENS = 1024;
/** The cost of one more run, in token slots. */
export const RUN_COST_SLOTS = 15;

/**
 * The encoder runs for texts grouped by token length (length -> indexes of texts): lengths in ascending order are
 * cut into consecutive groups at the least total cost (RUN_COST_SLOTS per run plus every padded slot), each group
 * into runs of at most BATCH_TOKENS slots. Deterministic: the same map gives the same runs.
 */
export function encoderRuns(byLength: Map<number, number[]>): number[][] {
  const lengths = [...byLength.keys()].sort((a, b) => a - b);
  const rowsBefore = [0];
  for (const l of lengths) rowsBefore.push(rowsBefore[rowsBefore.length - 1] + byLength.get(l)!.length);
  const perRun = (max: number): number => Math.max(1, Math.floor(BATCH_TOKENS / max));
  /** Lengths from..to-1 as one group: its runs' cost. */
  const cost = (from: number, to: number): number => {
    const rows = rowsBefore[to] - rowsBefore[from];
    const max = lengths[to - 1];
    return Math.ceil(rows / perRun(max)) * RUN_COST_SLOTS + rows * max;
  };
  // best[j]: the least cost of the first j lengths; cut[j]: where its last group starts
  const best = [0];
  const cut = [0];
  for (let j = 1; j <= lengths.length; j++) {
    best.push(Infinity);
    cut.push(0);
    for (let i = j - 1; i >= 0; i--) {
      const c = best[i] + cost(i, j);
      if (c < best[j]) {
        best[j] = c;
        cut[j] = i;
      }
    }
  }
  const runs: number[][] = [];
  for (let j = lengths.length; j > 0; j = cut[j]) {
    const members = lengths.slice(cut[j], j).flatMap((l) => byLength.get(l)!);
    const per = perRun(lengths[j - 1]);
    const group: number[][] = [];
    for (let i = 0; i < members.length; i += per) group.push(members.slice(i, i + per));
    runs.unshift(...group);
  }
  return runs;
}
