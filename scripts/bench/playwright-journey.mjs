// playwright-journey.mjs — the baseline of BenchmarkPlaywrightJourney (tests/journey_bench_test.go):
// the journey of BenchmarkJourney as a Playwright script, what an agent does without headless,
// with the PLAINTEXT password filled into the login page.
//
//   node scripts/bench/playwright-journey.mjs ORIGIN ACCOUNT PASSWORD
//
// One warm browser (Debian Chromium, headless, with the flags of host/cdp baseFlags that
// Playwright does not already pass), then one timed run for every line read on stdin (so that
// the benchmark can interleave them with headless's runs: both under the same load), each in
// a fresh browser context (as the journey's: no cookies of an earlier run), the journey's six
// steps:
//   1. sign in: goto /login, fill the username and the password, click submit, wait for /home
//   2. goto /shop
//   3. fill the quantity field (by its label) with 2
//   4. click Reserve (by role and name)
//   5. wait for #status to say "Reserved" (exactly)
//   6. wait for #stock to say "Stock: 8" (exactly)
// and the context closed. Any step that does not happen within 10 s fails the script (exit 1).
// Prints {"ready":true} once the browser runs, then {"ms":N} (the run's duration in
// milliseconds) for every run, one JSON line each; exits when stdin ends.
//
// The password is an argument here on purpose: this is the insecure way headless replaces, and
// the benchmark's password is a throwaway.
import { chromium } from 'playwright-core';

import { createInterface } from 'node:readline';

const [origin, account, password] = process.argv.slice(2);
if (!origin || !account || !password) {
  console.error('usage: node playwright-journey.mjs ORIGIN ACCOUNT PASSWORD');
  process.exit(2);
}

const baseFlags = [
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-breakpad',
  '--mute-audio',
  '--hide-scrollbars',
];
if (process.getuid && process.getuid() === 0) baseFlags.push('--no-sandbox');

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/lib/chromium/chromium',
  headless: true,
  args: baseFlags,
});
try {
  process.stdout.write(JSON.stringify({ ready: true }) + '\n');
  for await (const _ of createInterface({ input: process.stdin })) {
    const start = performance.now();
    const context = await browser.newContext();
    context.setDefaultTimeout(10000);
    const page = await context.newPage();
    await page.goto(origin + '/login');
    await page.fill('input[name="username"]', account);
    await page.fill('input[type="password"]', password);
    await Promise.all([
      page.waitForURL('**/home'),
      page.click('button[type="submit"]'),
    ]);
    await page.goto(origin + '/shop');
    await page.getByLabel('Quantity').fill('2');
    await page.getByRole('button', { name: 'Reserve' }).click();
    await page.locator('#status').getByText('Reserved', { exact: true }).waitFor();
    await page.locator('#stock').getByText('Stock: 8', { exact: true }).waitFor();
    await context.close();
    process.stdout.write(JSON.stringify({ ms: performance.now() - start }) + '\n');
  }
} finally {
  await browser.close();
}
