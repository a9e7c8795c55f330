#!/usr/bin/env node
// The npm registry mirror here serves only this platform's prebuilt binaries, so `npm install` leaves the
// other platforms' optional packages (nx, swc, buf, unrs-resolver) out of package-lock.json and `npm ci`
// then refuses the lock as out of sync. This adds the missing entries the way npm writes them on an
// unrestricted registry (optional, with os/cpu/libc), so `npm ci` skips them everywhere they do not fit.
// Run it after every `npm install` that changes dependencies.
const fs = require('node:fs');
const path = require('node:path');

const file = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const OS = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openharmony', 'sunos', 'netbsd', 'openbsd', 'aix'];
const CPU = { arm64: 'arm64', aarch64: 'arm64', x64: 'x64', ia32: 'ia32', armv7: 'arm', arm: 'arm', ppc64: 'ppc64', s390x: 's390x', riscv64: 'riscv64', loong64: 'loong64', wasm32: 'wasm32' };

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.map((p) => CPU[p]).find(Boolean);
  const libc = parts.some((p) => p.startsWith('musl')) ? 'musl' : parts.includes('gnu') || parts.some((p) => p.startsWith('gnueabi')) ? 'glibc' : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const candidates = [`${key ? key + '/' : ''}node_modules/${dep}`, `node_modules/${dep}`];
    if (candidates.some((c) => lock.packages[c])) continue;
    const { os, cpu, libc } = platformOf(dep);
    if (!os && !cpu) continue; // not a platform binary: leave it to npm
    lock.packages[`node_modules/${dep}`] = {
      version: spec.replace(/^[\^~=]/, ''),
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(libc ? { libc: [libc] } : {}),
      ...(os ? { os: [os] } : {}),
    };
    added += 1;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)));
fs.writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`package-lock.json: added ${added} platform-specific optional entries`);
