import { ConfigError, loadConfig, maskedValue } from '@platform/service-kit';
import { APPS } from './apps';
import { CliError, EXIT, type CliIo } from './io';

/** One setting as `config` shows it. */
interface Shown {
  value: string;
  /** `env` when the variable is set, `default` when the app's default applies. */
  source: 'env' | 'default';
}

/**
 * `config`: what each app reads from this environment, validated as the app validates it, every secret
 * masked. An invalid setting is listed with the app's problem and the exit code is 78.
 */
export function showConfig(opts: { app?: string; json?: boolean }, io: CliIo): number {
  const apps = opts.app ? APPS.filter(({ app }) => app.name === opts.app) : APPS;
  if (apps.length === 0)
    throw new CliError(`no app named ${opts.app}; the apps are ${APPS.map(({ app }) => app.name).join(', ')}`, EXIT.usage);
  const settings: Record<string, Record<string, Shown>> = {};
  const problems: Record<string, string[]> = {};
  for (const { app } of apps) {
    try {
      const config = loadConfig(app.env, io.env) as Record<string, unknown>;
      settings[app.name] = Object.fromEntries(
        Object.keys(app.env).map((name) => [
          name,
          { value: maskedValue(name, config[name]), source: io.env[name] === undefined || io.env[name] === '' ? 'default' : 'env' },
        ]),
      );
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems[app.name] = err.problems;
    }
  }
  if (opts.json) io.out(`${JSON.stringify({ apps: settings, problems }, null, 2)}\n`);
  else {
    for (const [app, values] of Object.entries(settings)) {
      io.out(`# ${app}\n`);
      for (const [name, { value, source }] of Object.entries(values))
        io.out(`${name}=${value}${source === 'default' ? '  # default' : ''}\n`);
      io.out('\n');
    }
  }
  for (const [app, list] of Object.entries(problems)) for (const p of list) io.err(`${app}: invalid configuration: ${p}\n`);
  return Object.keys(problems).length > 0 ? EXIT.config : EXIT.ok;
}
