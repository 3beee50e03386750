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
// The password is an argument here on purpose: this is the insecure way headless replaces, and
// the benchmark's password is a throwaway.
import { chromium } from 'playwright-core';

const [url, account, password, nArg] = process.argv.slice(2);
const n = Number.parseInt(nArg ?? '', 10);
if (!url || !account || !password || !(n > 0)) {
  console.error('usage: node playwright-login.mjs URL ACCOUNT PASSWORD N');
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
