module.exports = { ...require('../../jest.preset.js'), displayName: 'clusters', rootDir: __dirname };
