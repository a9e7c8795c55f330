import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { BusConnectError, type Bus } from '@platform/bus';
import { formatProgress, HubTakenError, simulate, type Simulation } from './simulate';
import { DEFAULTS } from './world';

/** Exit codes (sysexits where one fits), as the admin CLI's. */
export const EXIT = { ok: 0, failed: 1, usage: 64, unavailable: 69 } as const;

export interface SimulatorIo {
  env: NodeJS.ProcessEnv;
  /** The result (JSON). */
  out(text: string): void;
  /** Progress and errors. */
  err(text: string): void;
  /** Opens the bus (NATS) in the platform's namespace, which it hands out at enrollment. */
  connect(natsUrl: string, namespace: string): Promise<Bus>;
  /** Resolves when the user asks to stop (Ctrl-C, SIGTERM), for --serve. */
  untilStopped(): Promise<void>;
}

const HELP_AFTER = `
It enrolls the hubs over the REST API (POST /api/v1/orgs/{org}/clusters) and from then on speaks only the agent
protocol on NATS: one inventory report per hub, then license usage, resource events and usage samples of
productdb, productbackup, productvault and productingress (docs/simulator.md). The same --seed (and --now,
which a re-run with the same --state reuses) sends the same reports with the same message ids, which the
platform applies once.

The state file keeps the enrolled hubs' bus credentials (nkey seeds, answered only at enrollment): it holds
credentials, is written with mode 0600, and lets a re-run reuse those hubs. Without it a hub name enrolled
before cannot be used again: use another --org or --seed.

Example, against a platform started with NATS_URL=nats://127.0.0.1:4222 npm start:
  npm run -s simulate -- --nats nats://127.0.0.1:4222 --org acme --hubs 2 --spokes 4 --state ./.data/simulator-state.json

Exit codes: 0 done; 1 the simulation failed; 64 wrong arguments (--nats missing); 69 the platform or NATS cannot be reached.`;

function int(name: string, min: number) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer of at least ${min}`);
    return n;
  };
}

/** The platform's admin password when none is given: PLATFORM_ADMIN_PASSWORD, else the bootstrap file under DATA_DIR. */
function defaultPassword(env: NodeJS.ProcessEnv): string | undefined {
  if (env.PLATFORM_ADMIN_PASSWORD) return env.PLATFORM_ADMIN_PASSWORD;
  const file = path.join(env.DATA_DIR || './.data', 'bootstrap-admin-password');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Runs `npm run simulate -- <args>`; answers the exit code (never calls process.exit). */
export async function runSimulator(args: string[], io: SimulatorIo): Promise<number> {
  let code: number = EXIT.ok;
  const cli = new Command('simulate')
    .description('Play member clusters: N hub clusters with M managed clusters each, sending months of reports to the platform.')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError('(simulate --help lists the flags)')
    .option('--url <url>', 'the platform', 'http://localhost:8080')
    .addOption(
      new Option(
        '--username <login>',
        'account that enrolls the hubs (an owner of --org, or a site admin); default PLATFORM_ADMIN_USERNAME, else admin',
      ),
    )
    .addOption(
      new Option(
        '--password <password>',
        'its password; default PLATFORM_ADMIN_PASSWORD, else DATA_DIR/bootstrap-admin-password (DATA_DIR default ./.data)',
      ),
    )
    .option('--org <slug>', 'organization owning the hubs (created when missing)', 'simulated')
    .option('--hubs <n>', 'hub clusters', int('--hubs', 1), DEFAULTS.hubs)
    .option('--spokes <m>', 'managed clusters per hub', int('--spokes', 0), DEFAULTS.spokes)
    .option('--months <n>', 'months of usage up to now', int('--months', 1), DEFAULTS.months)
    .option('--seed <n>', 'seed of everything generated (names, UIDs, message ids, usage)', int('--seed', 0), DEFAULTS.seed)
    .option('--sample-hours <h>', 'usage sample interval, hours', int('--sample-hours', 1), DEFAULTS.sampleHours)
    .option('--now <time>', 'end of the simulated period (ISO 8601); default the state file’s, else now')
    .option(
      '--user-ids <ids>',
      'comma-separated platform account ids the reports name as their users; default the --org organization, to which the platform attributes them anyway',
    )
    .option('--nats <url>', 'NATS server the platform uses (its NATS_URL); required')
    .option('--state <file>', 'state file keeping the enrolled hubs’ bus credentials (mode 0600; holds credentials)')
    .option('--serve', 'keep answering resource-history requests until Ctrl-C')
    .addHelpText('after', HELP_AFTER)
    .action(async (o) => {
      code = await run(o, io);
    });
  try {
    await cli.parseAsync(args, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    throw err;
  }
  return code;
}

async function run(o: Record<string, any>, io: SimulatorIo): Promise<number> {
  if (!o.nats) {
    io.err(
      'simulate: --nats <url> is required. The simulator runs as a separate process, where the in-process bus reaches ' +
        'nobody: start the platform with NATS_URL=nats://127.0.0.1:4222 npm start and pass the same URL. (The demo seed, ' +
        'DEMO_SEED_MANIFEST, runs the simulator inside the platform instead.)\n',
    );
    return EXIT.usage;
  }
  const password = o.password ?? defaultPassword(io.env);
  if (!password) {
    io.err(
      'simulate: no password: pass --password, or set PLATFORM_ADMIN_PASSWORD, or run it where DATA_DIR/bootstrap-admin-password is\n',
    );
    return EXIT.usage;
  }
  let now: number | undefined;
  if (o.now !== undefined) {
    now = Date.parse(o.now);
    if (!Number.isFinite(now)) {
      io.err(`simulate: --now ${o.now} is not an ISO 8601 time\n`);
      return EXIT.usage;
    }
  }
  const userIds = o.userIds === undefined ? undefined : String(o.userIds).split(',').map(Number);
  if (userIds?.some((u) => !Number.isSafeInteger(u) || u <= 0)) {
    io.err('simulate: --user-ids must be positive integers separated by commas\n');
    return EXIT.usage;
  }
  let sim: Simulation | undefined;
  try {
    sim = await simulate({
      api: { url: o.url, username: o.username ?? io.env.PLATFORM_ADMIN_USERNAME ?? 'admin', password },
      org: o.org,
      hubs: o.hubs,
      spokes: o.spokes,
      months: o.months,
      seed: o.seed,
      sampleHours: o.sampleHours,
      now,
      userIds,
      bus: (namespace) => io.connect(o.nats, namespace),
      state: o.state,
      answerRequests: Boolean(o.serve),
      onProgress: (p) => io.err(`[simulate] ${formatProgress(p)}\n`),
    });
    io.out(`${JSON.stringify(sim.result, null, 2)}\n`);
    if (o.serve) {
      io.err('[simulate] answering resource-history requests; Ctrl-C stops\n');
      await io.untilStopped();
    }
    return EXIT.ok;
  } catch (err) {
    const unreachable = err instanceof BusConnectError || /cannot reach the platform/.test((err as Error).message);
    io.err(`simulate: ${(err as Error).message}\n`);
    return err instanceof HubTakenError ? EXIT.failed : unreachable ? EXIT.unavailable : EXIT.failed;
  } finally {
    await sim?.stop();
  }
}
