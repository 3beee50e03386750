// playwright-login.mjs — the baseline of BenchmarkPlaywrightLogin (tests/login_bench_test.go):
// what an agent does without headless, Playwright filling the PLAINTEXT password into the login
// page and submitting it.
//
//   node scripts/bench/playwright-login.mjs URL ACCOUNT PASSWORD N
//
// URL is the site's login page. One warm browser (Debian Chromium, headless, with the flags of
// host/cdp baseFlags that Playwright does not already pass) and one page; then N timed logins,
// each: goto URL, fill the username and the password, click submit, wait for /home and its
// "Welcome" heading. Between logins, untimed, /logout clears the session cookie. Prints
// {"ms":[…]} (one duration per login, in milliseconds) on stdout.
//
//   node scripts/bench/playwright-login.mjs URL ACCOUNT PASSWORD N CONTEXTS
//
// The baseline of BenchmarkConcurrentLogins32: CONTEXTS browser contexts (own cookies each), one
// page in each; N rounds, each: every page goes to URL (untimed, as the benchmark's visits are),
// then all CONTEXTS logins at once (fill, click submit, wait for the "Welcome" heading), timed
// one by one; /logout after the round, untimed. Prints {"ms":[…],"rounds":[…]} (each login, and
// the wall time of each round, in milliseconds).
//
// The password is an argument here on purpose: this is the insecure way headless replaces, and
// the benchmark's password is a throwaway.
import { chromium } from 'playwright-core';

const [url, account, password, nArg, cArg] = process.argv.slice(2);
const n = Number.parseInt(nArg ?? '', 10);
const contexts = cArg === undefined ? 0 : Number.parseInt(cArg, 10);
if (!url || !account || !password || !(n > 0) || !(contexts >= 0)) {
  console.error('usage: node playwright-login.mjs URL ACCOUNT PASSWORD N [CONTEXTS]');
  process.exit(2);
}

// host/cdp baseFlags (Playwright itself passes --headless, --remote-debugging-pipe,
// --no-first-run, --no-default-browser-check, --mute-audio, --hide-scrollbars and, as root,
// --no-sandbox; repeating them is harmless).
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
async function submit(page) {
  await page.fill('input[name="username"]', account);
  await page.fill('input[type="password"]', password);
  await Promise.all([
    page.waitForURL('**/home'),
    page.click('button[type="submit"]'),
  ]);
  await page.getByRole('heading', { name: /Welcome/ }).waitFor();
}

if (contexts > 0) {
  try {
    const pages = [];
    for (let i = 0; i < contexts; i++) pages.push(await (await browser.newContext()).newPage());
    const logout = new URL('/logout', url).href;
    const ms = [];
    const rounds = [];
    for (let r = 0; r < n; r++) {
      await Promise.all(pages.map((page) => page.goto(url)));
      const start = performance.now();
      await Promise.all(pages.map(async (page) => {
        const t0 = performance.now();
        await submit(page);
        ms.push(performance.now() - t0);
      }));
      rounds.push(performance.now() - start);
      await Promise.all(pages.map((page) => page.goto(logout)));
    }
    process.stdout.write(JSON.stringify({ ms, rounds }) + '\n');
  } finally {
    await browser.close();
  }
  process.exit(0);
}

try {
  const context = await browser.newContext();
  const page = await context.newPage();
  const logout = new URL('/logout', url).href;
  const ms = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await page.goto(url);
    await page.fill('input[name="username"]', account);
    await page.fill('input[type="password"]', password);
    await Promise.all([
      page.waitForURL('**/home'),
      page.click('button[type="submit"]'),
    ]);
    await page.getByRole('heading', { name: /Welcome/ }).waitFor();
    ms.push(performance.now() - start);
    await page.goto(logout); // untimed: back to signed out
  }
  process.stdout.write(JSON.stringify({ ms }) + '\n');
} finally {
  await browser.close();
}
