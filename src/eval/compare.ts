/**
 * Two models' answers to the same labeled questions, paired: how many each gets right, and the questions only one
 * of them gets right. A difference of a few questions is often chance; the exact sign test over the questions where
 * the two disagree on being right says how often.
 */

/** One question as both models answered it. */
export interface Pair {
  lang: string;
  kind: string;
  baseline: boolean;
  candidate: boolean;
}

export interface Tally {
  n: number;
  baseline: number;
  candidate: number;
  /** Right for the candidate only. */
  gained: number;
  /** Right for the baseline only. */
  lost: number;
  /** Two-sided exact sign test over gained + lost questions (1 when there are none). */
  p: number;
}

/** Two-sided exact binomial (p = 1/2) test of `k` successes in `n` trials, in integers (so a tie gives exactly 1). */
export function signTest(k: number, n: number): number {
  const low = BigInt(Math.min(k, n - k));
  const total = BigInt(n);
  let c = 1n; // C(n, i)
  let tail = 0n;
  for (let i = 0n; i <= low; i++) {
    if (i > 0n) c = (c * (total - i + 1n)) / i;
    tail += c;
  }
  const scale = 10n ** 15n;
  return Math.min(1, Number((2n * tail * scale) / (1n << total)) / 1e15);
}

export function tally(pairs: Pair[]): Tally {
  const gained = pairs.filter((p) => p.candidate && !p.baseline).length;
  const lost = pairs.filter((p) => p.baseline && !p.candidate).length;
  return {
    n: pairs.length,
    baseline: pairs.filter((p) => p.baseline).length,
    candidate: pairs.filter((p) => p.candidate).length,
    gained,
    lost,
    p: signTest(gained, gained + lost),
  };
}

/** Tallies for every language, every type, and all questions ("all"), in that order. */
export function tallies(pairs: Pair[]): { group: string; tally: Tally }[] {
  const langs = [...new Set(pairs.map((p) => p.lang))].sort();
  const kinds = [...new Set(pairs.map((p) => p.kind))].sort();
  return [
    ...langs.map((l) => ({ group: l, tally: tally(pairs.filter((p) => p.lang === l)) })),
    ...kinds.map((k) => ({ group: k, tally: tally(pairs.filter((p) => p.kind === k)) })),
    { group: "all", tally: tally(pairs) },
  ];
}
