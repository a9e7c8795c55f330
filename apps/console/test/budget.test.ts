import * as fs from 'node:fs';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';

/**
 * The console's first load — the page, the entry script and every module it preloads — stays within 300 KB of
 * JavaScript gzipped, and each area (organizations, clusters, contracts, billing, site admin) is a chunk of its
 * own, loaded only when its screen opens. Reads the production build (`npx nx run console:build`; `npm test`
 * builds it first).
 */
const DIST = path.join(__dirname, '..', '..', '..', 'dist', 'apps', 'console');
const BUDGET_BYTES = 300 * 1024;
const AREAS = ['orgs', 'clusters', 'contracts', 'billing', 'admin'];

const read = (file: string) => fs.readFileSync(path.join(DIST, file));
const gzipped = (file: string) => gzipSync(read(file), { level: 9 }).length;

describe('the console build', () => {
  let index: string;
  let firstLoad: string[];
  beforeAll(() => {
    if (!fs.existsSync(path.join(DIST, 'index.html'))) throw new Error(`no console build at ${DIST}: run npx nx run console:build`);
    index = read('index.html').toString();
    firstLoad = [...index.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="\/([^"]+\.js)"/g)].map((m) => m[1]);
  });

  it('loads at most 300 KB of JavaScript gzipped at first', () => {
    expect(firstLoad.length).toBeGreaterThan(0);
    const total = firstLoad.reduce((sum, file) => sum + gzipped(file), 0);
    expect(total).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it('splits every area into a chunk of its own, none of them in the first load', () => {
    const chunks = fs.readdirSync(path.join(DIST, 'assets'));
    for (const area of AREAS) {
      const chunk = chunks.find((f) => f.startsWith(`${area}-`) && f.endsWith('.js'));
      expect({ area, chunk }).toEqual({ area, chunk: expect.any(String) });
      expect(firstLoad).not.toContain(`assets/${chunk}`);
    }
  });

  it('keeps the chart library out of the first load', () => {
    // A message of Chart.js's core that minification keeps: where it is, the chart library is.
    const chartJs = /complete date adapter/;
    const entry = firstLoad.map((f) => read(f).toString()).join('\n');
    expect(entry).not.toMatch(chartJs);
    const chunks = fs.readdirSync(path.join(DIST, 'assets')).filter((f) => f.endsWith('.js'));
    expect(chunks.some((f) => chartJs.test(read(`assets/${f}`).toString()))).toBe(true);
  });

  it('has no inline script (the page’s Content-Security-Policy allows none)', () => {
    expect(index).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(index).not.toMatch(/\son[a-z]+=/i);
  });
});
