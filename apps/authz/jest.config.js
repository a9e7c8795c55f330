const preset = require('../../jest.preset.js');

// The CEL library ships as ES modules only; jest's module system loads CommonJS, so SWC turns it into that.
module.exports = {
  ...preset,
  displayName: 'authz',
  rootDir: __dirname,
  transform: {
    ...preset.transform,
    '/node_modules/@marcbachmann/cel-js/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!@marcbachmann/cel-js/)'],
};
