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

/**
 * A job's runs shared between two one-thread encoder sessions (the worker's and its helper's) so that both finish
 * at about the same time. Work is counted as above: RUN_COST_SLOTS per run plus its padded slots. The runs go out
 * in order, each to the side with less work so far; then, while it shortens the longer side, rows of one of
 * that side's runs (its longest rows) move to the other side as a run of their own: a request of one state and a
 * handful of short texts otherwise leaves one session reading all of the short texts while the other reads only
 * the state. Which run reads a text never changes its numbers (see above), so neither does this sharing.
 * Deterministic. Returns [the worker's runs, the helper's runs]; every row of `runs` is in exactly one of them.
 */
export function shareRuns(runs: number[][], lengthOf: (row: number) => number): [number[][], number[][]] {
  const work = (rows: number[]): number => RUN_COST_SLOTS + rows.length * Math.max(...rows.map(lengthOf));
  const sides: { runs: number[][]; work: number }[] = [
    { runs: [], work: 0 },
    { runs: [], work: 0 },
  ];
  for (const rows of runs) {
    const side = sides[1].work < sides[0].work ? sides[1] : sides[0];
    side.runs.push(rows);
    side.work += work(rows);
  }
  for (;;) {
    const [heavy, light] = sides[0].work >= sides[1].work ? [sides[0], sides[1]] : [sides[1], sides[0]];
    // the best cut: a run of the heavy side, its k longest rows moved (each part padded to its own longest row)
    let best = { run: -1, k: 0, span: heavy.work };
    heavy.runs.forEach((rows, run) => {
      const lengths = rows.map(lengthOf).sort((a, b) => b - a);
      for (let k = 1; k < lengths.length; k++) {
        const kept = RUN_COST_SLOTS + (lengths.length - k) * lengths[k];
        const moved = RUN_COST_SLOTS + k * lengths[0];
        const span = Math.max(heavy.work - work(rows) + kept, light.work + moved);
        if (span < best.span) best = { run, k, span };
      }
    });
    if (best.run < 0) break;
    const rows = heavy.runs[best.run];
    const moved = [...rows].sort((a, b) => lengthOf(b) - lengthOf(a) || a - b).slice(0, best.k);
    const kept = rows.filter((r) => !moved.includes(r));
    heavy.work += work(kept) - work(rows);
    heavy.runs[best.run] = kept;
    light.runs.push(moved);
    light.work += work(moved);
  }
  return [sides[0].runs, sides[1].runs];
}
