// Lint: TypeScript rules plus Nx module boundaries. Two tag dimensions keep the dependency graph honest:
// type:* says what a project is (apps never import apps; the generated proto lib depends on nothing),
// scope:* says whose it is (an app's code is only its own plus shared libs).
const nx = require('@nx/eslint-plugin');
const tseslint = require('typescript-eslint');
const reactHooks = require('eslint-plugin-react-hooks');

const APPS = ['console', 'gateway', 'authz', 'orgs-teams', 'contracts-licensing', 'billing-dashboard', 'metricsproxy', 'marketplace-listener', 'clusters'];
const LIBS = ['type:proto', 'type:util', 'type:data-access'];

/** The boundary rule; test files may also use the testing libs, the one-process launcher may also use apps. */
function boundaries({ tests = false, launcher = false } = {}) {
  const extra = tests ? ['type:testing'] : [];
  return [
    'error',
    {
      // Nx forbids importing applications outright; the local launcher is the one composition of all apps.
      allow: launcher ? APPS.map((a) => `@platform/app-${a}`) : [],
      enforceBuildableLibDependency: false,
      depConstraints: [
        { sourceTag: 'type:proto', onlyDependOnLibsWithTags: [] },
        { sourceTag: 'type:util', onlyDependOnLibsWithTags: [...LIBS, ...extra] },
        { sourceTag: 'type:data-access', onlyDependOnLibsWithTags: [...LIBS, ...extra] },
        { sourceTag: 'type:testing', onlyDependOnLibsWithTags: [...LIBS, 'type:testing'] },
        { sourceTag: 'type:app', onlyDependOnLibsWithTags: [...LIBS, ...extra] },
        { sourceTag: 'type:launcher', onlyDependOnLibsWithTags: [...LIBS, ...extra, ...(launcher ? ['type:app'] : [])] },
        { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
        ...APPS.map((app) => ({ sourceTag: `scope:${app}`, onlyDependOnLibsWithTags: ['scope:shared', `scope:${app}`] })),
      ],
    },
  ];
}

module.exports = [
  { ignores: ['**/node_modules/**', '**/dist/**', 'libs/proto/src/gen/**', 'apps/console/src/api/gen/**', '**/.nx/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-function-type': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@nx/enforce-module-boundaries': boundaries(),
    },
  },
  { files: ['**/*.test.ts', '**/test/**/*.ts'], rules: { '@nx/enforce-module-boundaries': boundaries({ tests: true }) } },
  { files: ['deploy/local/src/**/*.ts', 'deploy/cli/src/**/*.ts', 'bench/**/*.ts'], rules: { '@nx/enforce-module-boundaries': boundaries({ launcher: true }) } },
  { files: ['deploy/local/test/**/*.ts', 'deploy/cli/test/**/*.ts'], rules: { '@nx/enforce-module-boundaries': boundaries({ tests: true, launcher: true }) } },
  { files: ['**/*.js'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
  // The web console: React's rules of hooks; it imports no workspace code, only the generated API types.
  {
    files: ['apps/console/**/*.{ts,tsx,mts}'],
    plugins: { 'react-hooks': reactHooks, '@nx': nx },
    rules: {
      ...reactHooks.configs.recommended.rules,
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@nx/enforce-module-boundaries': boundaries(),
    },
  },
];
