// A stand-in for the few curl options the README's calls use (-s, -H, -d, -X, a URL without a
// scheme), so the README's shell runs where only Node is installed (CI needs nothing else). Each
// call is appended to $CURL_SHIM_LOG as a JSON line. Any other option is refused, so a README that
// starts using one fails its test instead of passing untried.
/* global process, URL, fetch -- a plain Node script: no TypeScript, so curl starts fast */
import { appendFileSync } from 'node:fs';

const args = process.argv.slice(2);
const headers = {};
let method;
let body;
let url;
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === '-s' || arg === '--silent') continue;
  if (arg === '-H' || arg === '--header') {
    const header = args[++i] ?? '';
    const colon = header.indexOf(':');
    headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
  } else if (arg === '-d' || arg === '--data') {
    body = args[++i] ?? '';
  } else if (arg === '-X' || arg === '--request') {
    method = args[++i];
  } else if (arg.startsWith('-')) {
    process.stderr.write(`curl (test stand-in): unsupported option ${arg}\n`);
    process.exit(2);
  } else {
    url = arg;
  }
}
if (!url) {
  process.stderr.write('curl (test stand-in): no URL\n');
  process.exit(2);
}
// curl's defaults: http:// when no scheme is given; -d means POST with a form content type.
const target = new URL(/^[a-z]+:\/\//i.test(url) ? url : `http://${url}`);
// curl tries every address of localhost; the server listens on IPv4 loopback only.
if (target.hostname === 'localhost') target.hostname = '127.0.0.1';
if (body !== undefined) headers['content-type'] ??= 'application/x-www-form-urlencoded';
try {
  const res = await fetch(target, { method: method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  const text = await res.text();
  if (process.env.CURL_SHIM_LOG)
    appendFileSync(
      process.env.CURL_SHIM_LOG,
      `${JSON.stringify({ url: target.href, status: res.status, body: text })}\n`,
    );
  process.stdout.write(text);
} catch (err) {
  process.stderr.write(`curl (test stand-in): ${err.cause?.code ?? err.message}\n`);
  process.exit(7);
}
