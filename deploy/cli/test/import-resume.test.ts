import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../src/cli';

// `cli import` as an operator runs it (docs/import.md): a run cut short resumes from its resume point, sending only
// the batches not yet confirmed; the same file again finds everything there; an organization the platform refuses
// fails the run, naming it and why. A stand-in platform on loopback keeps the organizations it was sent, as
// POST /admin/orgs/import does (the route: apps/gateway/test/org-import.test.ts; what orgs-teams does with a batch:
// apps/orgs-teams/test/import.int.test.ts).

describe('cli import: resuming, running again, refusals', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-resume-'));
  const file = path.join(dir, 'organizations.csv');
  /** The organizations the stand-in platform holds, and the names of each batch it was sent. */
  const held = new Set<string>();
  const batches: string[][] = [];
  let token = '';
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      token = req.headers.authorization ?? '';
      const { organizations } = JSON.parse(text) as { organizations: { name: string; teams: { members: string[] }[] }[] };
      batches.push(organizations.map((o) => o.name));
      const results = organizations.map((o) => {
        const unknown = o.teams.flatMap((t) => t.members).find((m) => m === 'nobody');
        if (unknown) return { name: o.name, outcome: 'refused', id: 0, created: {}, existing: {}, errors: [`no user named "${unknown}"`] };
        const outcome = held.has(o.name) ? 'unchanged' : 'created';
        held.add(o.name);
        return { name: o.name, outcome, id: 1, created: {}, existing: {}, errors: [] };
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results }));
    });
  });
  let out = '';
  let err = '';
  const io = {
    env: { PLATFORM_TOKEN: 'admin-token' } as NodeJS.ProcessEnv,
    out: (t: string) => (out += t),
    err: (t: string) => (err += t),
    readStdin: async () => '',
  };
  let url = '';
  /** `npm run -s cli -- import <file> --url <platform> --batch-size 2`. */
  const cli = async () => {
    out = '';
    err = '';
    batches.length = 0;
    return runCli(['import', file, '--url', url, '--batch-size', '2'], io);
  };

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => {
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('resumes a run cut short from its resume point, and the same file again changes nothing', async () => {
    const csv = 'organization,team,username\nwayne,Owners,olivia\nwayne,a,mia\nstark,b,nora\numbrella,Owners,olivia\n';
    fs.writeFileSync(file, csv);
    // An earlier run was killed after the platform confirmed its first batch (wayne): it left its resume point.
    held.add('wayne');
    const sha256 = createHash('sha256').update(csv).digest('hex');
    fs.writeFileSync(`${file}.import-state`, JSON.stringify({ sha256, url: `${url}api/v1/admin/orgs/import`, batchSize: 2, done: 1 }));

    expect(await cli()).toBe(0);
    expect(err).toContain('resuming: 1 of 3 batches were imported by an earlier run');
    expect(out).toContain('3 organizations in 3 batches: 2 created, 0 completed, 0 unchanged, 0 refused');
    expect(batches.flat().sort()).toEqual(['stark', 'umbrella']);
    expect(token).toBe('token admin-token');
    expect(fs.existsSync(`${file}.import-state`)).toBe(false);

    expect(await cli()).toBe(0);
    expect(out).toContain('3 organizations in 3 batches: 0 created, 0 completed, 3 unchanged, 0 refused');
    expect(batches.flat().sort()).toEqual(['stark', 'umbrella', 'wayne']);
  });

  it('fails the run on an organization the platform refuses, naming it and why', async () => {
    fs.writeFileSync(file, 'organization,team,username\ninitech,a,nobody\n');
    expect(await cli()).toBe(1);
    expect(err).toContain('initech: refused: no user named "nobody"');
  });
});
