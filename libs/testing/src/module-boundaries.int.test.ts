import * as path from 'node:path';
import { ESLint } from 'eslint';
import { createProjectGraphAsync } from '@nx/devkit';

const ROOT = path.resolve(__dirname, '../../..');

/** Lints `code` as if it were the file at `file`; returns the boundary-rule messages. */
async function boundaryErrors(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: ROOT });
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result.messages.filter((m) => m.ruleId === '@nx/enforce-module-boundaries').map((m) => m.message);
}

describe('module boundaries (lint with real tags)', () => {
  beforeAll(async () => {
    process.env.NX_DAEMON = 'false';
    // The rule silently skips itself without a project graph; build it so these checks can fail.
    await createProjectGraphAsync({ exitOnError: false });
  }, 60_000);

  it('forbids an app importing another app', async () => {
    const errors = await boundaryErrors(
      'apps/authz/src/bad.ts',
      "import { startGateway } from '@platform/app-gateway';\nexport const x = startGateway;\n",
    );
    expect(errors.join('\n')).toMatch(/Imports of apps are forbidden/);
  });

  it('keeps the generated proto lib free of dependencies', async () => {
    // A lib that does not depend on proto itself: for one that does (the service kit), the rule reports the loop.
    const errors = await boundaryErrors(
      'libs/proto/src/bad.ts',
      "import { sizeOf } from '@platform/telemetry';\nexport const x = sizeOf;\n",
    );
    expect(errors.join('\n')).toMatch(/type:proto/);
    const looping = await boundaryErrors(
      'libs/proto/src/bad.ts',
      "import { loadConfig } from '@platform/service-kit';\nexport const x = loadConfig;\n",
    );
    expect(looping.join('\n')).toMatch(/Circular dependency between "proto" and "service-kit"/);
  });

  it('sees every project a project imports (the graph the rule and the build cache read)', async () => {
    const graph = await createProjectGraphAsync({ exitOnError: false });
    const gateway = graph.dependencies['gateway'].map((d) => d.target);
    expect(gateway).toEqual(expect.arrayContaining(['service-kit', 'bus', 'db', 'orgs-teams-client', 'authz-client']));
  });

  it('keeps testing libs out of production code', async () => {
    const errors = await boundaryErrors(
      'apps/clusters/src/bad.ts',
      "import { eventually } from '@platform/testing';\nexport const x = eventually;\n",
    );
    expect(errors.join('\n')).toMatch(/can only depend on libs tagged with/);
  });

  it('lets an app use the shared libs and the launcher compose the apps', async () => {
    expect(
      await boundaryErrors(
        'apps/clusters/src/ok.ts',
        "import { loadConfig } from '@platform/service-kit';\nexport const x = loadConfig;\n",
      ),
    ).toEqual([]);
    expect(
      await boundaryErrors(
        'deploy/local/src/ok.ts',
        "import { startGateway } from '@platform/app-gateway';\nexport const x = startGateway;\n",
      ),
    ).toEqual([]);
  });
});
