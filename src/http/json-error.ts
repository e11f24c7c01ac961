/**
 * Where a text that JSON.parse refused stops being JSON, as a 1-based line and column (in UTF-16
 * units, as editors count them). V8's own messages give no position for some errors, so the text is
 * scanned again here: only on the error path, iteratively (no recursion on deep nesting), linear.
 */
export function jsonErrorPosition(text: string): { line: number; column: number } {
  const at = jsonErrorOffset(text);
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < at; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: at - lineStart + 1 };
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

/** Offset of the first character that cannot continue valid JSON (text.length when the text ends too early). */
export function jsonErrorOffset(text: string): number {
  const n = text.length;
  const open: string[] = [];
  let i = 0;
  // What may come next: a value (first in an array: "]" too), a key (first in an object: "}" too), or what follows a value.
  let expect: "value" | "firstValue" | "key" | "firstKey" | "after" = "value";
  const skipSpace = (): void => {
    while (i < n && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  };
  /** Past a string starting at i, or -(offset + 1) of its error. */
  const string = (): number => {
    let j = i + 1;
    while (j < n) {
      const c = text[j];
      if (c === '"') return j + 1;
      if (text.charCodeAt(j) < 0x20) return -(j + 1);
      if (c === "\\") {
        const e = text[j + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(j + 2, j + 6))) return -(j + 2);
          j += 6;
        } else if (e !== undefined && ESCAPES.has(e)) j += 2;
        else return -(Math.min(j + 1, n) + 1);
      } else j++;
    }
    return -(n + 1);
  };
  for (;;) {
    skipSpace();
    if (expect === "after") {
      if (open.length === 0) return i;
      if (i >= n) return n;
      const c = text[i];
      const top = open[open.length - 1];
      if (c === ",") {
        i++;
        expect = top === "{" ? "key" : "value";
      } else if ((c === "}" && top === "{") || (c === "]" && top === "[")) {
        open.pop();
        i++;
      } else return i;
      continue;
    }
    if (i >= n) return n;
    const c = text[i];
    if (expect === "key" || expect === "firstKey") {
      if (expect === "firstKey" && c === "}") {
        open.pop();
        i++;
        expect = "after";
        continue;
      }
      if (c !== '"') return i;
      const end = string();
      if (end < 0) return -end - 1;
      i = end;
      skipSpace();
      if (text[i] !== ":") return Math.min(i, n);
      i++;
      expect = "value";
      continue;
    }
    if (expect === "firstValue" && c === "]") {
      open.pop();
      i++;
      expect = "after";
      continue;
    }
    expect = "after";
    if (c === "{" || c === "[") {
      open.push(c);
      i++;
      expect = c === "{" ? "firstKey" : "firstValue";
    } else if (c === '"') {
      const end = string();
      if (end < 0) return -end - 1;
      i = end;
    } else if (text.startsWith("true", i) || text.startsWith("null", i)) i += 4;
    else if (text.startsWith("false", i)) i += 5;
    else {
      NUMBER.lastIndex = i;
      if (!NUMBER.test(text)) return i;
      i = NUMBER.lastIndex;
    }
  }
}
