import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { chromium, type Browser, type Page } from "playwright-core";
import { startService, type Service } from "./helpers/service.js";

/** Debian's chromium (.ci/run installs it); flags that keep it off the network. */
const CHROMIUM = "/usr/bin/chromium";

let svc: Service;
let browser: Browser;
before(async () => {
  svc = await startService({ env: { SVC_PER_MINUTE: "0" } });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
});
after(async () => {
  await browser?.close();
  await svc?.stop();
});

async function openPage(): Promise<{ page: Page; outside: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // Every request the page makes must go to the service itself.
  const outside: string[] = [];
  page.on("request", (r) => {
    if (!r.url().startsWith(svc.url)) outside.push(r.url());
  });
  const res = await page.goto(`${svc.url}/`);
  assert.equal(res?.status(), 200);
  assert.match(res?.headers()["content-security-policy"] ?? "", /default-src 'none'/);
  return { page, outside };
}

describe("playground page", () => {
  test("paste a key, write a state, add a choice, a yes/no and a score question, send: probability bars and confidence", async () => {
    const { page, outside } = await openPage();
    await page.fill("#key", svc.key);
    await page.fill("#state", "I was charged twice for my subscription. Please refund the extra payment.");
    const choice = await page.locator("#add-choice").click().then(() => page.locator(".question").last());
    await choice.locator(".q-key").fill("topic");
    await choice.locator(".q-text").fill("What is this ticket about?");
    await choice.locator(".q-options").fill("billing: payments, charges, refunds\ntechnical: bugs and errors\naccount: login, password");
    const noul = await page.locator("#add-noul").click().then(() => page.locator(".question").last());
    await noul.locator(".q-key").fill("refund");
    await noul.locator(".q-text").fill("Is the customer asking for a refund?");
    const score = await page.locator("#add-score").click().then(() => page.locator(".question").last());
    await score.locator(".q-key").fill("mood");
    await score.locator(".q-text").fill("How upset is the customer?");
    await score.locator(".q-options").fill("calm\nannoyed\nfurious");
    await page.click("#send");
    await page.locator('.answer[data-key="mood"]').waitFor();
    const topic = page.locator('.answer[data-key="topic"]');
    assert.equal(await topic.locator(".bar").count(), 3);
    assert.equal(await topic.locator(".bar.best").getAttribute("data-option"), "billing");
    assert.match(await topic.locator("h3").innerText(), /^topic billing$/);
    const values = await topic.locator(".bar-value").allInnerTexts();
    const sum = values.map(Number).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 0.01, values.join(" "));
    assert.match(await topic.locator(".confidence").innerText(), /^confidence (0\.\d{3}|1\.000)$/);
    assert.match(await page.locator('.answer[data-key="refund"] h3').innerText(), /^refund P\(true\) = 0\.\d{3}$/);
    assert.equal(await page.locator('.answer[data-key="mood"] .bar').count(), 3);
    assert.match(await page.locator("#meta").innerText(), /^svc-1\.6\.0 · \d+ input tokens · request req_[0-9a-f]{24}$/);
    assert.equal(await page.locator("#error").innerText(), "");
    // Copy as curl: the same request for a terminal, with the key left as $KEY.
    await page.click("#curl-button");
    const curl = await page.locator("#curl").innerText();
    assert.ok(curl.startsWith(`curl -s ${svc.url}/v1/systemone \\\n  -H "Authorization: Bearer $KEY"`), curl);
    assert.ok(!curl.includes(svc.key));
    const sent = JSON.parse(curl.slice(curl.indexOf("-d '") + 4, -1));
    assert.deepEqual(sent.questions.mood, { type: "score", instructions: "How upset is the customer?", criteria: ["calm", "annoyed", "furious"] });
    if (process.env.SVC_SCREENSHOT) await page.screenshot({ path: process.env.SVC_SCREENSHOT, fullPage: true });
    assert.deepEqual(outside, []);
    await page.close();
  });

  test("/v1/decide shows the abstention; a bad key shows the error", async () => {
    const { page, outside } = await openPage();
    await page.selectOption("#endpoint", "/v1/decide");
    // 1: every answer short of certainty abstains, whatever this model's confidence on this state
    await page.fill("#min-confidence", "1");
    await page.fill("#key", svc.key);
    await page.fill("#state", "My parcel has not arrived after two weeks.");
    const choice = await page.locator("#add-choice").click().then(() => page.locator(".question").last());
    await choice.locator(".q-key").fill("team");
    await choice.locator(".q-options").fill("shipping: deliveries\nbilling: payments");
    assert.equal(await choice.locator(".hint").innerText(), "2 to 255 options. Descriptions are optional. The built-in model reads them; see the README for when they help.");
    const scale = await page.locator("#add-score").click().then(() => page.locator(".question").last());
    await scale.locator(".q-key").fill("mood");
    await scale.locator(".q-text").fill("How upset is the customer?");
    await scale.locator(".q-options").fill("calm\nannoyed\nfurious");
    await page.click("#send");
    await page.locator('.answer[data-key="team"]').waitFor();
    // A decide scale answer keys its probabilities "0".."n-1"; the bars carry the levels the user typed.
    await page.locator('.answer[data-key="mood"]').waitFor();
    assert.deepEqual(await page.locator('.answer[data-key="mood"] .bar .label').allInnerTexts(), ["0 calm", "1 annoyed", "2 furious"]);
    assert.equal(await page.locator('.answer[data-key="team"] .abstained').innerText(), "abstained (under 1.000)");
    assert.equal(await page.locator('.answer[data-key="team"] h3').innerText(), "team no answer");
    await page.fill("#key", "svc_00000000_not-a-real-key-at-all");
    await page.click("#send");
    await page.locator("#error:not(:empty)").waitFor();
    assert.equal(await page.locator("#error").innerText(), "401 authentication_error: Invalid or revoked API key.");
    assert.equal(await page.locator(".answer").count(), 0);
    assert.deepEqual(outside, []);
    await page.close();
  });
});
