/** A share as a right-aligned percentage with one decimal; "-" for no questions (NaN). */
export function pct(x: number): string {
  return Number.isNaN(x) ? "   -  " : `${(100 * x).toFixed(1).padStart(5)}%`;
}

/** The languages present, English first, then by name. */
export function languagesOf(langs: Iterable<string>): string[] {
  return [...new Set(langs)].sort((a, b) => (a === "en" ? -1 : b === "en" ? 1 : a.localeCompare(b)));
}
