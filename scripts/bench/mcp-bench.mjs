// mcp-bench.mjs — the driver of BenchmarkMCP (tests/mcp_bench_test.go): headless mcp against
// Playwright MCP (@playwright/mcp, pinned in package.json), each spawned over stdio and driven
// by this one client (the TypeScript SDK's Client), on the same local pages, in one run.
//
//   node scripts/bench/mcp-bench.mjs --headless BIN --base URL --n N [--warmup W] [--chromium PATH]
//                                    [--servers headless,playwright] [--dump DIR]
//
// BASE is the site of tests/mcpbench_site_test.go. Each server gets W untimed iterations, then N
// timed ones; the two servers take turns, iteration by iteration, so drift in the machine falls
// on both. One iteration, with the server's own tools:
//   nav        navigate to BASE/app (a page of ~70 interactive elements) and take a snapshot:
//              headless visit + snapshot; Playwright browser_navigate + browser_snapshot (its
//              navigate result points at a snapshot file, it does not carry one)
//   click      click "Sort by name" (in-page: a script reverses the table's rows, no request;
//              the next snapshot must show them reversed)
//   clicknav   click the link "Project Atlas" (it navigates to /app/project/1)
// Before each click, an untimed snapshot gives the element's ref. Sizes: the bytes of what the
// agent receives for a snapshot of /login and of /app, counted the same way for both servers:
// the UTF-8 bytes of every text content item plus those of the structuredContent JSON. --dump
// writes those snapshot results to DIR/SERVER-PAGE.json. Also the bytes of the tools/list
// result's tools (JSON), which an agent carries in its context all along.
//
// headless mcp gets the caller's XDG_*, DBUS_SESSION_BUS_ADDRESS, HOME, PATH and LANG; the host
// it talks to must be running. Playwright MCP runs Debian Chromium (--executable-path, default
// /usr/lib/chromium/chromium: Debian's /usr/bin/chromium wrapper misbehaves here), headless,
// --isolated (an in-memory profile), --no-sandbox as root, with the flags of host/cdp baseFlags
// that it does not pass itself (through its config file's launchOptions.args), in a temp dir of
// its own (its cwd and --output-dir: it writes snapshot files there).
//
// Prints one JSON line on stdout:
//   {"headless":{"nav_ms":[…],"click_ms":[…],"clicknav_ms":[…],"bytes":{"login":B,"app":B},
//    "elements":{"login":N,"app":N},"tools":N,"tools_bytes":B},"playwright":{…same…}}
// Any error — a thrown call, an isError result, a ref not found, a click that did not land —
// ends the run with exit 1: a benchmark with an error is a failed run.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

// snapshotOutline is the outline in a snapshot result's text content: the lines after its
// header ("snapshot: N elements; everything below is untrusted page content …", then the
// "url …" and "title …" lines).
function snapshotOutline(r) {
  const t = (r?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  const lines = t.split('\n');
  if (!lines[0]?.startsWith('snapshot: ') || !lines[0].includes('untrusted page content')) return '';
  let i = 1;
  while (i < lines.length && (lines[i].startsWith('url ') || lines[i].startsWith('title '))) i++;
  return lines.slice(i).join('\n');
}

// outlineElements parses headless's compact snapshot outline: one element per line,
// "REF KIND[TYPE] "TEXT" attr=value …".
function outlineElements(outline) {
  return (outline ?? '').split('\n').filter(Boolean).map((line) => {
    const m = line.match(/^(\S+) ([a-z]+)(?:\[([^\]]*)\])?(?: ("(?:[^"\\]|\\.)*"))?/);
    if (!m) return { line };
    return { ref: m[1], kind: m[2], type: m[3], text: m[4] ? JSON.parse(m[4]) : undefined, line };
  });
}


const { values: args } = parseArgs({
  options: {
    headless: { type: 'string' },
    base: { type: 'string' },
    n: { type: 'string' },
    warmup: { type: 'string', default: '2' },
    chromium: { type: 'string', default: '/usr/lib/chromium/chromium' },
    servers: { type: 'string', default: 'headless,playwright' },
    dump: { type: 'string' },
  },
  strict: true,
});
const n = Number.parseInt(args.n ?? '', 10);
const warmup = Number.parseInt(args.warmup, 10);
if ((!args.headless && args.servers.includes('headless')) || !args.base || !(n > 0) || !(warmup >= 0)) {
  console.error('usage: node mcp-bench.mjs --headless BIN --base URL --n N [--warmup W] [--chromium PATH]');
  process.exit(2);
}
const timeout = 60_000;
const enc = new TextEncoder();

// bytesOf counts what the agent receives from one tool result: every text content item and
// the structuredContent JSON (the same count for both servers).
function bytesOf(r) {
  let b = 0;
  for (const c of r.content ?? []) if (c.type === 'text') b += enc.encode(c.text).length;
  if (r.structuredContent !== undefined) b += enc.encode(JSON.stringify(r.structuredContent)).length;
  return b;
}
const textOf = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

async function call(server, name, a) {
  const r = await server.client.callTool({ name, arguments: a }, undefined, { timeout });
  if (r.isError) throw new Error(`${server.name} ${name} ${JSON.stringify(a)}: isError: ${JSON.stringify(r.structuredContent ?? textOf(r)).slice(0, 500)}`);
  return r;
}

// Each server: how to navigate, snapshot, click, and read a ref and the page URL from results.
const servers = {
  headless: {
    async start() {
      const env = {};
      for (const k of ['XDG_RUNTIME_DIR', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'DBUS_SESSION_BUS_ADDRESS', 'HOME', 'PATH', 'LANG']) {
        if (process.env[k] !== undefined) env[k] = process.env[k];
      }
      return new StdioClientTransport({ command: args.headless, args: ['mcp'], env, stderr: 'inherit' });
    },
    navigate: (s, url) => call(s, 'visit', { url }),
    snapshot: (s) => call(s, 'snapshot', {}),
    click: (s, ref) => call(s, 'click', { ref }),
    elements: (r) => outlineElements(snapshotOutline(r)),
    ref(r, kind, label) {
      return this.elements(r).find((e) => e.kind === kind && (e.text ?? '').trim() === label)?.ref;
    },
    url: (r) => r.structuredContent?.url ?? '',
    links(r) {
      return this.elements(r).filter((e) => e.kind === 'link').map((e) => (e.text ?? '').trim());
    },
  },
  playwright: {
    async start() {
      this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pwmcp-'));
      // host/cdp baseFlags that Playwright does not pass itself (it adds --headless, the pipe,
      // --no-first-run, --no-default-browser-check, --mute-audio, --hide-scrollbars, and
      // --no-sandbox from chromiumSandbox: false).
      const config = {
        browser: {
          browserName: 'chromium',
          isolated: true,
          launchOptions: {
            executablePath: args.chromium,
            headless: true,
            chromiumSandbox: false,
            args: ['--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update',
              '--disable-sync', '--disable-default-apps', '--disable-breakpad'],
          },
        },
      };
      const cfg = path.join(this.dir, 'config.json');
      fs.writeFileSync(cfg, JSON.stringify(config));
      const cli = path.join(path.dirname(createRequire(import.meta.url).resolve('@playwright/mcp/package.json')), 'cli.js');
      const env = { ...process.env };
      return new StdioClientTransport({
        command: process.execPath,
        args: [cli, '--config', cfg, '--executable-path', args.chromium, '--headless', '--isolated', '--no-sandbox',
          '--output-dir', path.join(this.dir, 'out')],
        cwd: this.dir,
        env,
        stderr: 'inherit',
      });
    },
    navigate: (s, url) => call(s, 'browser_navigate', { url }),
    snapshot: (s) => call(s, 'browser_snapshot', {}),
    click: (s, ref, label) => call(s, 'browser_click', { element: label, target: ref }),
    elements: (r) => textOf(r).match(/\[ref=[^\]]+\]/g) ?? [],
    ref(r, kind, label) {
      const esc = label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const m = textOf(r).match(new RegExp(`- ${kind} "${esc}"[^\\n]*\\[ref=([^\\]]+)\\]`));
      return m?.[1];
    },
    url: (r) => textOf(r).match(/- Page URL: (\S+)/)?.[1] ?? '',
    links: (r) => [...textOf(r).matchAll(/- link "([^"]*)"/g)].map((m) => m[1]),
  },
};

async function connect(name) {
  const s = servers[name];
  const transport = await s.start();
  const client = new Client({ name: 'headless-mcp-bench', version: '1.0.0' });
  await client.connect(transport);
  s.name = name;
  s.client = client;
  s.res = { nav_ms: [], click_ms: [], clicknav_ms: [], bytes: {}, elements: {} };
  // The tool definitions are in the agent's context from the start, every conversation.
  const { tools } = await client.listTools(undefined, { timeout });
  s.res.tools = tools.length;
  s.res.tools_bytes = enc.encode(JSON.stringify(tools)).length;
  return s;
}

// ?who= tells the site which server asked: one letter each, so that the URLs (which both
// snapshots carry) are the same length for both.
const whoOf = { headless: 'h', playwright: 'p' };
const site = (p, name) => `${args.base}${p}${p.includes('?') ? '&' : '?'}who=${whoOf[name]}`;

async function clickOn(s, kind, label, check) {
  const snap = await s.snapshot(s);
  check?.(snap);
  const ref = s.ref(snap, kind, label);
  if (!ref) throw new Error(`${s.name}: no ${kind} "${label}" in the snapshot:\n${textOf(snap).slice(0, 2000)}`);
  const t0 = performance.now();
  const r = await s.click(s, ref, `${label} ${kind}`);
  return [performance.now() - t0, r];
}

async function iteration(s, timed) {
  const t0 = performance.now();
  await s.navigate(s, site('/app', s.name));
  const snap = await s.snapshot(s);
  const nav = performance.now() - t0;
  if (s.elements(snap).length < 50) throw new Error(`${s.name}: /app snapshot has ${s.elements(snap).length} elements:\n${textOf(snap).slice(0, 2000)}`);
  const [click] = await clickOn(s, 'button', 'Sort by name');
  const [clicknav, r] = await clickOn(s, 'link', 'Project Atlas', (snap) => {
    // The sort reversed the rows: the table starts with the last project now.
    const first = s.links(snap).find((t) => t.startsWith('Project '));
    if (first !== 'Project Onyx') throw new Error(`${s.name}: after "Sort by name" the first project is ${first}`);
  });
  let url = s.url(r);
  if (!url) url = s.url(await s.snapshot(s)); // a click result that does not name the page
  if (!new URL(url).pathname.endsWith('/app/project/1')) throw new Error(`${s.name}: clicking "Project Atlas" led to ${url}`);
  if (timed) {
    s.res.nav_ms.push(nav);
    s.res.click_ms.push(click);
    s.res.clicknav_ms.push(clicknav);
  }
}

async function sizes(s) {
  for (const p of ['login', 'app']) {
    await s.navigate(s, site('/' + p, s.name));
    const snap = await s.snapshot(s);
    s.res.bytes[p] = bytesOf(snap);
    if (args.dump) fs.writeFileSync(path.join(args.dump, `${s.name}-${p}.json`), JSON.stringify(snap, null, 1));
    s.res.elements[p] = s.elements(snap).length;
  }
}

const order = args.servers.split(',');
for (const name of order) if (!servers[name]) throw new Error(`mcp-bench: unknown server ${name}`);
const running = [];
let failed = false;
try {
  for (const name of order) running.push(await connect(name));
  for (const s of running) await sizes(s);
  for (let i = 0; i < warmup + n; i++) {
    for (const s of running) await iteration(s, i >= warmup);
  }
} catch (err) {
  failed = true;
  console.error(`mcp-bench: ${err?.stack ?? err}`);
} finally {
  for (const s of running) await s.client.close().catch(() => {});
  if (servers.playwright.dir) fs.rmSync(servers.playwright.dir, { recursive: true, force: true });
}
if (failed) process.exit(1);
process.stdout.write(JSON.stringify(Object.fromEntries(running.map((s) => [s.name, s.res]))) + '\n');
