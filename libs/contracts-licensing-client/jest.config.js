module.exports = { ...require('../../jest.preset.js'), displayName: 'contracts-licensing-client', rootDir: __dirname };
