// The console's component tests: each area's screens rendered in jsdom against a stubbed API (fetch), beside the
// browser tests that drive the built console on the whole platform (deploy/local/test/console*.e2e.test.ts).
const preset = require('../../jest.preset.js');

module.exports = {
  ...preset,
  displayName: 'console-components',
  rootDir: __dirname,
  testEnvironment: '<rootDir>/test/components-environment.js',
  transform: {
    '^.+\\.tsx?$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript', tsx: true }, target: 'es2022', transform: { react: { runtime: 'automatic' } } },
        module: { type: 'commonjs' },
      },
    ],
  },
  moduleFileExtensions: ['tsx', 'ts', 'js', 'json'],
  moduleNameMapper: { ...preset.moduleNameMapper, '\\.css$': '<rootDir>/test/style-stub.js' },
  setupFilesAfterEnv: ['<rootDir>/test/components-setup.ts'],
  testMatch: ['<rootDir>/src/**/*.test.tsx'],
};
