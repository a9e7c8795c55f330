// Shared jest settings: TypeScript through SWC (type checking is the `typecheck` target's job), and
// the tsconfig path aliases mapped so tests import libs the way the code does.
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');
const { ignoredOutside } = require('./jest.tiers');

const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
  moduleNameMapper[`^${alias.replace(/[/]/g, '\\/')}$`] = path.join(__dirname, target);
}

// Dependencies that ship only ES modules, which jest's CommonJS runtime cannot require on this Node: SWC compiles them
// to CommonJS like the TypeScript. One list for every project, so a project that loads one through another app's code
// (the launcher loading authz's CEL evaluator) needs nothing of its own.
const ESM_ONLY = ['age-encryption', '@noble', '@scure', '@marcbachmann', 'openid-client', 'oauth4webapi', 'jose', 'oidc-provider'];

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
    [`/node_modules/(${ESM_ONLY.join('|')})/.+\\.m?js$`]: ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper,
  testMatch: ['<rootDir>/**/*.test.ts'],
  // With TEST_TIER set, only that tier's files (jest.tiers.js).
  testPathIgnorePatterns: ['/node_modules/', '/dist/', ...ignoredOutside(process.env.TEST_TIER)],
  testTimeout: 30_000,
  // The unit tier refuses child processes (jest.unit-tier.js).
  setupFiles: process.env.TEST_TIER === 'unit' ? [path.join(__dirname, 'jest.unit-tier.js')] : [],
};
