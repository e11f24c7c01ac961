import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { LANGS, MESSAGES, message, pickLanguage, type MessageCode } from "../src/http/i18n.js";

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("German messages (de)", () => {
  test("de is a supported language", () => {
    assert.ok(LANGS.includes("de"));
  });

  test("every message code has a non-empty German text with the same placeholders as English", () => {
    const codes = Object.keys(MESSAGES) as MessageCode[];
    assert.ok(codes.length > 0);
    for (const code of codes) {
      const texts: Record<string, string> = MESSAGES[code];
      const de = texts.de;
      assert.equal(typeof de, "string", code);
      assert.ok(de.trim().length > 0, `${code}: empty German text`);
      assert.notEqual(de, texts.en, `${code}: German text is the English one`);
      assert.deepEqual(placeholders(de), placeholders(texts.en), `${code}: placeholders differ from English`);
    }
  });

  test("every language has every code with the English placeholders", () => {
    for (const code of Object.keys(MESSAGES) as MessageCode[]) {
      const texts: Record<string, string> = MESSAGES[code];
      assert.deepEqual(Object.keys(texts).sort(), [...LANGS].sort(), code);
      for (const lang of LANGS) assert.deepEqual(placeholders(texts[lang]), placeholders(texts.en), `${code} (${lang})`);
    }
  });

  test("placeholders are filled in German", () => {
    assert.equal(message("choice_options", "de", { n: 1 }), "Eine Choice benötigt zwischen 2 und 255 Optionen; erhalten: 1.");
    assert.equal(message("per_minute", "de", { limit: 60, retry: 12 }), "Ratenlimit erreicht: 60 Anfragen pro Minute. Versuchen Sie es in 12 s erneut.");
  });

  test("Accept-Language picks de by the same rules as the other languages", () => {
    const cases: [string | undefined, string][] = [
      ["de", "de"],
      ["DE", "de"],
      ["de-DE", "de"],
      ["de-AT", "de"],
      ["de-CH;q=0.7, en;q=0.6", "de"],
      ["en;q=0.8, de;q=0.9", "de"],
      ["de;q=0.5, fr;q=0.9", "fr"],
      ["de, es", "de"],
      ["es, de", "es"],
      ["de;q=0", "en"],
      ["de;q=0, pt;q=0.1", "pt"],
      ["deu", "en"],
      ["ja, de;q=0.1", "de"],
      ["it", "en"],
      [undefined, "en"],
    ];
    for (const [header, lang] of cases) assert.equal(pickLanguage(header), lang, String(header));
  });
});
