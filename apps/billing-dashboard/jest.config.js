module.exports = { ...require('../../jest.preset.js'), displayName: 'billing-dashboard', rootDir: __dirname };
