module.exports = { ...require('../../jest.preset.js'), displayName: 'marketplace-listener-client', rootDir: __dirname };
