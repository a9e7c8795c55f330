module.exports = { ...require('../../jest.preset.js'), displayName: 'console', rootDir: __dirname, testMatch: ['<rootDir>/test/**/*.test.ts'] };
