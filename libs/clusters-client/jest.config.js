module.exports = { ...require('../../jest.preset.js'), displayName: 'clusters-client', rootDir: __dirname };
