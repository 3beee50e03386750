// client.mjs — an independent MCP client for `headless mcp`: the TypeScript SDK's Client over
// its StdioClientTransport, nothing from this repository. Run by TestMCPTypeScriptClient
// (tests/mcp_node_test.go), which sets up the world (a private keyring, brokerd with the scripted
// pinentry approving, an enrolled credential, the local login site).
//
//   node tests/mcpclient/client.mjs --headless BIN --login-url URL --alias ALIAS [--session NAME]
//
// It spawns `BIN mcp` with the caller's XDG_RUNTIME_DIR, XDG_CONFIG_HOME, XDG_DATA_HOME,
// DBUS_SESSION_BUS_ADDRESS, HOME, PATH and LANG (the SDK passes only HOME, PATH and a few more
// unless told) and checks:
//   tools   tools/list has exactly the expected names; every tool has an outputSchema of type
//           object and all four annotations (readOnlyHint, destructiveHint, idempotentHint,
//           openWorldHint) as booleans, with the values the issue states where it states them.
//   login   visit the login URL (auth_required names the alias), snapshot (a password field),
//           auth_login with the alias and the visit's challenge: status "authenticated".
//   error   a click on a ref no snapshot gave: isError with structuredContent
//           {"error":{"code":"REF_UNKNOWN","message","hint"}} and a text line.
// The SDK validates every structuredContent against the tool's outputSchema (errors included), so
// a result that does not match its schema is a mismatch too.
//
// Prints one JSON line on stdout: {"ok":bool, "mismatches":[…], "tools":[…], "visit":…,
// "snapshot":…, "auth":…, "error":…}; exits 1 on any mismatch, 2 on bad usage. Every result
// the server sent goes to stderr as a transcript (the test sweeps stdout and stderr for the
// password), together with the server's own stderr.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
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


// The tool surface of issue 13, exactly, journey_run of issue 14, the read-only doctor of
// issue 15, and what issues 44 and 45 added.
const expectedTools = [
  'status', 'session_create', 'session_list', 'session_close', 'visit', 'back', 'snapshot',
  'click', 'fill', 'select', 'press', 'hover', 'scroll', 'wait', 'screenshot', 'auth_login',
  'credentials_list', 'journey_run', 'doctor',
  // issue 44's dialogs, windows and lists, issue 45's hand-over
  'dialog', 'pages', 'console_list', 'network_list', 'handover',
];
const hints = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];
// What the issue says of the annotations' values, where it says it.
const expectedHints = {
  snapshot: { readOnlyHint: true },
  screenshot: { readOnlyHint: true },
  wait: { readOnlyHint: true },
  status: { readOnlyHint: true, openWorldHint: false },
  session_list: { readOnlyHint: true, openWorldHint: false },
  credentials_list: { readOnlyHint: true, openWorldHint: false },
  doctor: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  session_create: { openWorldHint: false },
  session_close: { openWorldHint: false },
  click: { readOnlyHint: false, destructiveHint: true },
  press: { readOnlyHint: false, destructiveHint: true },
  visit: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  fill: { readOnlyHint: false, destructiveHint: false },
  select: { readOnlyHint: false, destructiveHint: false },
  hover: { readOnlyHint: false, destructiveHint: false },
  scroll: { readOnlyHint: false, destructiveHint: false },
  auth_login: { readOnlyHint: false, destructiveHint: false },
  // A journey can click anything.
  journey_run: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
};
const passEnv = ['XDG_RUNTIME_DIR', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'DBUS_SESSION_BUS_ADDRESS', 'HOME', 'PATH', 'LANG'];

let args;
try {
  ({ values: args } = parseArgs({
    options: {
      headless: { type: 'string' },
      'login-url': { type: 'string' },
      alias: { type: 'string' },
      session: { type: 'string', default: 'default' },
      timeout: { type: 'string', default: '120000' },
      // slow-person: only visit and auth_login, the latter with the SDK's own default
      // request timeout (60 s), with a person who never answers: the agent must get the
      // typed PRESENCE_TIMEOUT, never the client's "Request timed out".
      'slow-person': { type: 'boolean', default: false },
    },
    strict: true,
  }));
} catch (err) {
  console.error(`client.mjs: ${err.message}`);
  process.exit(2);
}
if (!args.headless || !args['login-url'] || !args.alias) {
  console.error('usage: node client.mjs --headless BIN --login-url URL --alias ALIAS [--session NAME] [--timeout MS]');
  process.exit(2);
}
const timeout = Number.parseInt(args.timeout, 10);

const out = { ok: false, mismatches: [] };
const mismatch = (what) => out.mismatches.push(what);
const log = (label, v) => process.stderr.write(`client.mjs: ${label} ${JSON.stringify(v)}\n`);

const env = {};
for (const k of passEnv) if (process.env[k] !== undefined) env[k] = process.env[k];
const transport = new StdioClientTransport({ command: args.headless, args: ['mcp'], env, stderr: 'inherit' });
const client = new Client({ name: 'headless-mcpclient', version: '1.0.0' });

// call runs one tool; a thrown error (transport, protocol, schema validation) is a mismatch
// and returns null.
async function call(name, a) {
  try {
    const r = await client.callTool({ name, arguments: a }, undefined, { timeout });
    log(`${name} ->`, r);
    return r;
  } catch (err) {
    mismatch(`${name}: ${err.message}`);
    log(`${name} threw`, String(err));
    return null;
  }
}

// textOf is the text content of a result (one line, per the issue).
const textOf = (r) => (r?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

function checkOK(name, r) {
  if (!r) return false;
  if (r.isError) {
    mismatch(`${name}: isError ${JSON.stringify(r.structuredContent ?? textOf(r))}`);
    return false;
  }
  if (!r.structuredContent || typeof r.structuredContent !== 'object') mismatch(`${name}: no structuredContent`);
  if (!textOf(r)) mismatch(`${name}: no text summary`);
  return true;
}

if (args['slow-person']) {
  try {
    await client.connect(transport);
    await call('visit', { session: args.session, url: args['login-url'] });
    const t0 = Date.now();
    let r = null;
    try {
      r = await client.callTool({ name: 'auth_login', arguments: { session: args.session, alias: args.alias } });
    } catch (err) {
      mismatch(`auth_login with a slow person: the client gave up first: ${err.message}`);
    }
    out.slow = { seconds: Math.round((Date.now() - t0) / 1000), code: r?.structuredContent?.error?.code };
    if (r && (r.isError !== true || out.slow.code !== 'PRESENCE_TIMEOUT')) mismatch(`auth_login with a slow person: ${JSON.stringify(r.structuredContent)}, want PRESENCE_TIMEOUT`);
  } catch (err) {
    mismatch(`client: ${err.message}`);
  } finally {
    await client.close().catch(() => {});
  }
  out.ok = out.mismatches.length === 0;
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(out.ok ? 0 : 1);
}

try {
  await client.connect(transport);
  out.server = client.getServerVersion();

  // tools
  const { tools } = await client.listTools(undefined, { timeout });
  const names = tools.map((t) => t.name).sort();
  out.tools = names;
  const want = [...expectedTools].sort();
  const missing = want.filter((n) => !names.includes(n));
  const extra = names.filter((n) => !want.includes(n));
  if (missing.length) mismatch(`tools missing: ${missing.join(', ')}`);
  if (extra.length) mismatch(`tools not in the surface: ${extra.join(', ')}`);
  out.annotations = {};
  for (const t of tools) {
    const a = t.annotations ?? {};
    out.annotations[t.name] = Object.fromEntries(hints.map((h) => [h, a[h]]));
    for (const h of hints) {
      if (typeof a[h] !== 'boolean') mismatch(`${t.name}: annotation ${h} is ${JSON.stringify(a[h])}, want a boolean`);
    }
    for (const [h, v] of Object.entries(expectedHints[t.name] ?? {})) {
      if (typeof a[h] === 'boolean' && a[h] !== v) mismatch(`${t.name}: ${h} is ${a[h]}, the issue says ${v}`);
    }
    if (!t.outputSchema || t.outputSchema.type !== 'object') mismatch(`${t.name}: no outputSchema of type object`);
    if (!t.inputSchema || t.inputSchema.type !== 'object') mismatch(`${t.name}: no inputSchema of type object`);
  }

  // login
  const session = args.session;
  const loginURL = args['login-url'];
  const v = await call('visit', { session, url: loginURL });
  if (checkOK('visit', v)) {
    const sc = v.structuredContent;
    const ar = sc.auth_required;
    out.visit = { url: sc.url, title: sc.title, session: sc.session, auth_required: ar && { origin: ar.origin, aliases: ar.aliases, challenge: Boolean(ar.challenge), expires_at: ar.expires_at } };
    if (sc.session !== session) mismatch(`visit: session ${JSON.stringify(sc.session)}, want ${session}`);
    if (!ar) mismatch('visit: no auth_required on the login page');
    else {
      if (!ar.challenge) mismatch('visit: auth_required without a challenge');
      if (!Array.isArray(ar.aliases) || !ar.aliases.includes(args.alias)) mismatch(`visit: auth_required aliases ${JSON.stringify(ar.aliases)} lack ${args.alias}`);
      if (ar.origin !== new URL(loginURL).origin) mismatch(`visit: auth_required origin ${ar.origin}, want ${new URL(loginURL).origin}`);
    }
  }
  const s = await call('snapshot', { session });
  if (checkOK('snapshot', s)) {
    const sc = s.structuredContent;
    // The outline is the text content (what a client that shows only content gives the
    // model), after a header that marks it untrusted.
    const els = outlineElements(snapshotOutline(s));
    if (sc.outline !== undefined) mismatch('snapshot: the outline is in structuredContent too');
    out.snapshot = { url: sc.url, elements: els.length, kinds: [...new Set(els.map((e) => e.kind))].sort(), truncated: sc.truncated };
    if (els.length !== sc.count) mismatch(`snapshot: ${els.length} outline lines, count ${sc.count}`);
    if (!els.some((e) => e.type === 'password')) mismatch('snapshot: no password field on the login page');
    if (els.some((e) => !e.ref)) mismatch('snapshot: an element without a ref');
  }
  const challenge = v?.structuredContent?.auth_required?.challenge;
  const a = await call('auth_login', challenge ? { session, alias: args.alias, challenge } : { session, alias: args.alias });
  if (checkOK('auth_login', a)) {
    const sc = a.structuredContent;
    out.auth = { status: sc.status, origin: sc.origin, alias: sc.alias, session: sc.session, evidence: sc.evidence };
    if (sc.status !== 'authenticated') mismatch(`auth_login: status ${JSON.stringify(sc.status)}, want "authenticated"`);
    if (sc.alias !== args.alias) mismatch(`auth_login: alias ${JSON.stringify(sc.alias)}`);
    if (sc.origin !== new URL(loginURL).origin) mismatch(`auth_login: origin ${JSON.stringify(sc.origin)}`);
  }

  // error shape
  const e = await call('click', { session, ref: 'no-such-ref' });
  if (e) {
    const err = e.structuredContent?.error;
    out.error = { isError: e.isError === true, code: err?.code, message: Boolean(err?.message), hint: Boolean(err?.hint), text: textOf(e) };
    if (e.isError !== true) mismatch('click on an unknown ref: not isError');
    if (!err || typeof err !== 'object') mismatch(`click on an unknown ref: structuredContent ${JSON.stringify(e.structuredContent)}, want {"error":{…}}`);
    else {
      if (err.code !== 'REF_UNKNOWN') mismatch(`click on an unknown ref: code ${JSON.stringify(err.code)}, want REF_UNKNOWN`);
      if (typeof err.message !== 'string' || !err.message) mismatch('click on an unknown ref: no message');
      if (typeof err.hint !== 'string' || !err.hint) mismatch('click on an unknown ref: no hint');
    }
    if (!textOf(e)) mismatch('click on an unknown ref: no text');
  }
  // arguments are checked against the published input schema: visit without its url, and
  // select's values as a string, are INVALID_ARGUMENT naming the parameter; and every error
  // speaks tools and parameters, not the CLI.
  for (const [tool, a, param] of [['visit', { session }, 'url'], ['select', { session, ref: 'e1', values: 'a' }, 'values']]) {
    const r = await call(tool, a);
    const err = r?.structuredContent?.error;
    if (r?.isError !== true || err?.code !== 'INVALID_ARGUMENT' || !String(err?.message).includes(`parameter ${param} `)) {
      mismatch(`${tool} ${JSON.stringify(a)}: ${JSON.stringify(r?.structuredContent)}, want INVALID_ARGUMENT naming ${param}`);
    }
    out.argErrors = [...(out.argErrors ?? []), err?.code];
  }
  for (const r of [e]) {
    const err = r?.structuredContent?.error ?? {};
    const said = `${err.message} ${err.hint}`.replace(/`headless [^`]*`/g, '');
    if (/'headless [a-z]| --[a-z]|JSON object per line|Go struct/.test(said)) mismatch(`an error speaks the CLI over MCP: ${JSON.stringify(err)}`);
  }
} catch (err) {
  mismatch(`client: ${err.message}`);
  log('threw', String(err?.stack ?? err));
} finally {
  await client.close().catch(() => {});
}
out.ok = out.mismatches.length === 0;
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(out.ok ? 0 : 1);
