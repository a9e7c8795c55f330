module.exports = { ...require('../../jest.preset.js'), displayName: 'marketplace-listener', rootDir: __dirname };
