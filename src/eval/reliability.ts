import type { Bin } from "./metrics.js";

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];

function esc(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * A reliability diagram as a standalone SVG: for each series (a language), the accuracy of each
 * confidence bin against its mean confidence, a point's area growing with its count, and the diagonal
 * a perfectly calibrated model would follow.
 */
export function reliabilitySvg(title: string, series: { name: string; bins: Bin[]; ece: number }[]): string {
  const size = 420;
  const left = 60;
  const top = 50;
  const right = 190;
  const bottom = 50;
  const x = (v: number): number => left + v * size;
  const y = (v: number): number => top + (1 - v) * size;
  const f = (v: number): string => v.toFixed(1);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${left + size + right}" height="${top + size + bottom}" viewBox="0 0 ${left + size + right} ${top + size + bottom}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${left}" y="24" font-size="15" font-weight="bold">${esc(title)}</text>`,
  );
  for (let i = 0; i <= 10; i++) {
    const v = i / 10;
    out.push(
      `<line x1="${f(x(v))}" y1="${f(y(0))}" x2="${f(x(v))}" y2="${f(y(1))}" stroke="#eee"/>`,
      `<line x1="${f(x(0))}" y1="${f(y(v))}" x2="${f(x(1))}" y2="${f(y(v))}" stroke="#eee"/>`,
      `<text x="${f(x(v))}" y="${f(y(0) + 16)}" text-anchor="middle">${v.toFixed(1)}</text>`,
      `<text x="${f(x(0) - 6)}" y="${f(y(v) + 4)}" text-anchor="end">${v.toFixed(1)}</text>`,
    );
  }
  out.push(
    `<rect x="${left}" y="${top}" width="${size}" height="${size}" fill="none" stroke="#333"/>`,
    `<line x1="${f(x(0))}" y1="${f(y(0))}" x2="${f(x(1))}" y2="${f(y(1))}" stroke="#999" stroke-dasharray="5,4"/>`,
    `<text x="${f(x(0.5))}" y="${f(y(0) + 36)}" text-anchor="middle">confidence: probability of the model's answer (mean per bin)</text>`,
    `<text transform="translate(16 ${f(y(0.5))}) rotate(-90)" text-anchor="middle">accuracy in the bin</text>`,
  );
  series.forEach((s, k) => {
    const color = COLORS[k % COLORS.length];
    const points = s.bins.map((b) => `${f(x(b.confidence))},${f(y(b.accuracy))}`).join(" ");
    if (s.bins.length > 1) out.push(`<polyline points="${points}" fill="none" stroke="${color}" stroke-width="1.5" opacity="0.8"/>`);
    for (const b of s.bins) {
      out.push(
        `<circle cx="${f(x(b.confidence))}" cy="${f(y(b.accuracy))}" r="${f(2.5 + Math.sqrt(b.n))}" fill="${color}" fill-opacity="0.55" stroke="${color}">` +
          `<title>${esc(s.name)}: ${b.n} answers with confidence ${b.lo.toFixed(1)}-${b.hi.toFixed(1)}, mean ${b.confidence.toFixed(3)}, accuracy ${b.accuracy.toFixed(3)}</title></circle>`,
      );
    }
    const n = s.bins.reduce((a, b) => a + b.n, 0);
    const ly = top + 10 + k * 20;
    out.push(
      `<circle cx="${left + size + 24}" cy="${ly}" r="5" fill="${color}"/>`,
      `<text x="${left + size + 36}" y="${ly + 4}">${esc(s.name)} (n=${n}, ECE ${s.ece.toFixed(3)})</text>`,
    );
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
