module.exports = { ...require('../../jest.preset.js'), displayName: 'contracts-licensing', rootDir: __dirname };
